"""The screens never hide a finding: the pinned corpus checked with them and without them.

    python bench/screen.py [FOLDER ...] [--packages NAME ...] [--dest DIR]

Each file of each FOLDER (by default, each package that bench/corpus.py fetched; the folders of
bench/leakfixes.py and bench/scan.py hold findings to lose) is linted in this process twice: as a run
does, where the screen (`source.reportable`) skips a file, or a rule, whose text lacks what the
rule's findings need, and LibCST parses only a file whose first analysis, on the tree built from
`ast`, finds something (`engine._finds_nothing`); and with both off, every enabled rule run on
every file parsed by LibCST. The two must give the same findings. Prints, per folder, the files,
those that are torch code (the screen before it skips the others), those of them that no enabled
rule's words let through, the rule runs the words spare on torch code, the files that LibCST
parsed, the findings, and any finding the screens would hide (exit status 1 if there is one).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_DEST, PINNED

from tensorlint import engine
from tensorlint.findings import Finding
from tensorlint.rules import all_rules, default_codes
from tensorlint.source import is_test_code, might_matter, read_source, reportable


def _every_code(source: str, codes: Collection[str]) -> list[str]:
    return list(codes)


def _findings(path: Path, screened: bool) -> tuple[set[Finding], int]:
    """The file's findings, and how many times LibCST parsed it (0 or 1)."""
    first_pass = engine._finds_nothing
    parses = 0

    def counted(source: str, path: Path | None, codes: Collection[str]) -> bool:
        nonlocal parses
        nothing = first_pass(source, path, codes)
        parses += not nothing
        return nothing

    if screened:
        with mock.patch.object(engine, "_finds_nothing", counted):
            return set(engine.lint_file(path)), parses
    with (
        mock.patch.object(engine, "reportable", _every_code),
        mock.patch.object(engine, "_finds_nothing", lambda source, path, codes: False),
    ):
        return set(engine.lint_file(path)), 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="folders or files (default: the pinned packages)")
    parser.add_argument("--packages", nargs="*", help="folder names under DEST/corpus (default: all pinned)")
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    args = parser.parse_args()
    names = args.packages or [source.folder for source in PINNED]
    paths = args.paths or [args.dest / "corpus" / name for name in names]
    codes = default_codes()
    growth = {rule.code for rule in all_rules() if rule.grows_over_a_run}
    columns = ["files", "torch code", "skipped by words", "rule runs spared", "parsed by LibCST", "findings", "hidden"]
    print("| checked | " + " | ".join(columns) + " |\n|---|" + "---:|" * len(columns))
    total = [0] * len(columns)
    for path in paths:
        row = [0] * len(columns)
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            try:
                source = read_source(file)
            except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
                continue
            torch_code = might_matter(source)
            in_tests = is_test_code(str(file), source)  # as the engine does: growth rules off in test code
            running = reportable(source, [c for c in codes if not (in_tests and c in growth)]) if torch_code else []
            (with_screen, parsed), (without, _) = _findings(file, True), _findings(file, False)
            for finding in sorted(without - with_screen, key=lambda f: (f.filename, f.sort_key)):
                print(f"hidden: {finding.filename}:{finding.location.row}: {finding.code} {finding.message[:80]}")
            spared = len(codes) - len(running) if torch_code else 0
            counts = [
                1,
                torch_code,
                torch_code and not running,
                spared,
                parsed,
                len(without),
                len(without - with_screen),
            ]
            row = [a + int(b) for a, b in zip(row, counts, strict=True)]
        total = [a + b for a, b in zip(total, row, strict=True)]
        if path.is_dir():
            print(f"| {path.name} | " + " | ".join(map(str, row)) + " |")
    print("| **all** | " + " | ".join(map(str, total)) + " |")
    return 1 if total[-1] else 0


if __name__ == "__main__":
    sys.exit(main())
