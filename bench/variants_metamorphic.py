"""The metamorphic rewrites of tests/metamorphic.py, applied to the hand-written variants.

    python bench/variants_metamorphic.py

The fixtures are ours; the variants under bench/variants/ were written blind, in the styles real
training code takes. For each variant file with one leak (`# leak`) that tensorlint reports at its
line, every rewrite that applies (renames, import aliases, `append` <-> `+= [x]`, wrapping, moving
the store into a helper, the loop body into a step function or a LightningModule's
`training_step`, ...) must keep the finding: at the line the rewrite maps the marker to, or, when
the rewrite moves the store, anywhere in the file with at least as many findings of that rule.
Prints, per rewrite, how many keep the finding and how many lose it, then each loss.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import metamorphic  # noqa: E402  (tests/metamorphic.py: the rewrites)

from helpers import markers  # noqa: E402
from tensorlint.engine import lint_source  # noqa: E402
from tensorlint.rules import all_codes  # noqa: E402

VARIANTS = ROOT / "bench" / "variants"
LEAK = re.compile(r"#\s*leak\b.*$", re.MULTILINE)


def findings(source: str) -> set[tuple[int, str]]:
    return {(f.location.row, f.code) for f in lint_source(source, "variant.py", codes=all_codes()) if f.code}


def single_leak_files() -> list[Path]:
    """Files with exactly one marked leak (projects of several modules are judged as a whole)."""
    found = []
    for path in sorted(VARIANTS.rglob("*.py")):
        if "_projects_" in str(path.relative_to(VARIANTS)) or path.name.startswith("neg"):
            continue
        if len(LEAK.findall(path.read_text(encoding="utf-8"))) == 1:
            found.append(path)
    return found


def main() -> int:
    kept, lost = Counter[str](), Counter[str]()
    losses = []
    for path in single_leak_files():
        text = path.read_text(encoding="utf-8")
        row = next(i for i, line in enumerate(text.splitlines(), 1) if LEAK.search(line))
        before = findings(text)
        codes = sorted(code for r, code in before if r == row)
        if not codes:
            continue  # not found at its line: bench/variants.py counts those
        fixture = metamorphic.Fixture(f"{codes[0]}/{path.name}", LEAK.sub(f"# expect: {codes[0]}", text))
        for transformation in metamorphic.TRANSFORMATIONS:
            rewritten = transformation.apply(fixture)
            if not rewritten:
                continue
            after = findings(rewritten)
            at_line = markers(rewritten) <= after
            count = {code: sum(1 for _, c in after if c == code) for code in codes}
            moved = any(count[code] >= sum(1 for _, c in before if c == code) for code in codes)
            if at_line or moved:
                kept[transformation.name] += 1
            else:
                lost[transformation.name] += 1
                losses.append(f"{transformation.name}: {path.relative_to(VARIANTS)}")
    print("| rewrite | keeps the finding | loses it |")
    print("|---|---:|---:|")
    for transformation in metamorphic.TRANSFORMATIONS:
        name = transformation.name
        if kept[name] or lost[name]:
            print(f"| `{name}` | {kept[name]} | {lost[name]} |")
    print(f"| all | {sum(kept.values())} | {sum(lost.values())} |")
    for loss in losses:
        print(f"lost: {loss}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
