"""Hand-written variants of the shapes leaks take in training code: how many tensorlint reports.

    python bench/variants.py

`bench/variants/` holds small modules written for issue 15 (not mined, not tuned on: written
before the analysis changed), each leak marked `# leak` on the line a finding should point at,
and hard negatives (`neg_*.py`, no marker) that must stay silent. A variant counts as found at
its line, found elsewhere in the file (the closure, or the call of a helper that keeps the
value), or missed; any finding in a file without a marker is a false one. These are our own
shapes: the number says what is covered, not how unseen code fares (bench/leakfixes.py
measures that). `s6_first/` and `s6_second/` were written by a helper that saw none of the
analysis, in issue 15's sixth session, and measured before the changes they then prompted
(docs/real-world.md); `s12_blind/` likewise in its twelfth (30 leaks, 30 look-alikes), and
`s17_blind/` and `s17_blind2/` in its seventeenth (30 and 30 each, the second in the styles of
real repositories: helpers, callbacks, recorders handed around), and `s18_blind*/` in its
eighteenth (framework styles, research code across functions, 12 TL001 leaks in library code,
12 TL004 leaks accumulated in another function; each with as many look-alikes), and
`s19_blind1/` to `s19_blind6/` in its nineteenth (12 leaks and 12 look-alikes each: TL001 in
library code, 2017-2020 PyTorch, class hierarchies, applied ML scripts, library internals, and
research code spread over cooperating classes), and `s20_blind1/` to `s20_blind4/` in its
twentieth (framework internals and callbacks, state that library classes keep, evaluation and
generation without no_grad, and TL009/TL002/TL007 in library code); `s24_projects_a/` to
`s24_projects_c/` in its twenty-fourth: projects of several modules (6 leaks and 6 look-alikes
each), every leak crossing a module boundary, each project one verdict (found at the marked
line, or elsewhere in the project: the call in the module that shows the loop or the worker);
`s28_blind1/` to `s28_blind3/` in its twenty-eighth (new domains); and in its thirty-eighth
`s38_blind_meters/` (12 leaks and 12 look-alikes, each a project of two or three modules: meters,
loggers, trackers and monitors in their own module), `s38_blind_generative/` (generative models
and inference services) and `s38_blind_medical/` (medical imaging, detection, older PyTorch); and in its forty-ninth
`s49_blind_domains/` (graph networks, recommenders, contrastive memory banks, forecasting, NeRF,
speech) and `s49_blind_plumbing/` (trackers, early stoppers, loggers, replay buffers, prediction
writers and monitors that training code calls per batch or epoch), 12 leaks and 12 look-alikes each.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

VARIANTS = Path(__file__).resolve().parent / "variants"
MARKER = "# leak"


def main() -> None:
    command = [sys.executable, "-m", "tensorlint", "--no-cache", "--isolated", "--exit-zero"]
    out = subprocess.run([*command, "--output-format", "json", str(VARIANTS)], capture_output=True, text=True)
    reported: dict[Path, set[int]] = defaultdict(set)
    for finding in json.loads(out.stdout or "[]"):
        reported[Path(finding["filename"]).resolve()].add(finding["location"]["row"])
    at_line = elsewhere = negatives = 0
    missed: list[str] = []
    false: list[str] = []
    for unit in _units():
        marks = [(path, row) for path in unit for row in _marked_rows(path)]
        found = [(path, row) for path in unit for row in sorted(reported[path.resolve()])]
        if not marks:
            negatives += 1
            false += [f"{_where(path, row)} (a negative)" for path, row in found]
            continue
        for path, row in marks:
            if (path, row) in found:
                at_line += 1
            elif found:
                elsewhere += 1
                missed.append(f"{_where(path, row)} (reported at {', '.join(_where(*f) for f in found)})")
            else:
                missed.append(f"{_where(path, row)} (not reported)")
    print(f"{at_line}/{at_line + len(missed)} found at the marked line, {elsewhere} more elsewhere in the file")
    print(f"{len(false)} findings in {negatives} negatives")
    print("\n".join(missed + false))


def _units() -> list[list[Path]]:
    """What one verdict is given for: a file, or a project (a folder with its own `pyproject.toml`,
    `s24_projects_*/`) whose leak crosses its modules and may be reported in any of them."""
    projects = sorted(marker.parent for marker in VARIANTS.rglob("pyproject.toml"))
    units: dict[Path, list[Path]] = defaultdict(list)
    for path in sorted(VARIANTS.rglob("*.py")):
        project = next((root for root in projects if root in path.parents), path)
        units[project].append(path)
    return list(units.values())


def _marked_rows(path: Path) -> list[int]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [row for row, line in enumerate(lines, start=1) if line.rstrip().endswith(MARKER)]


def _where(path: Path, row: int) -> str:
    return f"{path.relative_to(VARIANTS)}:{row}"


if __name__ == "__main__":
    main()
