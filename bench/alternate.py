"""Two versions of tensorlint on the pinned corpus, alternated: before, after, after, before.

    python bench/alternate.py BEFORE AFTER [--packages NAME ...] [--dest DIR]

BEFORE and AFTER are checkouts of tensorlint (`git worktree add /tmp/before <commit>`); each run
puts one on `PYTHONPATH` and checks a package cold (`--no-cache --isolated`, default jobs), from
outside the repository. A shared machine drifts by 10-30% within minutes: alternating cancels a
linear drift, a sequential pair does not. Prints each package's wall seconds and the ratio of the
sums, and the same for the whole selection.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_DEST, PINNED, byte_compile


def wall_seconds(code: Path, package: Path) -> float:
    command = [sys.executable, "-m", "tensorlint", "--no-cache", "--isolated", "--exit-zero", "-q", str(package)]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as outside:  # not the repository: its tensorlint would shadow CODE
        environment = dict(os.environ, PYTHONPATH=str(code.resolve()))
        subprocess.run(command, cwd=outside, env=environment, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--packages", nargs="*", help="folder names under DEST/corpus (default: all pinned)")
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    args = parser.parse_args()
    names = args.packages or [source.folder for source in PINNED]
    for code in (args.before, args.after):
        byte_compile(code)
    totals = [0.0, 0.0]
    print("| package | before (s) | after (s) | after / before |\n|---|---|---|---:|")
    for name in names:
        package = args.dest / "corpus" / name
        first, second, third, fourth = (
            wall_seconds(code, package) for code in (args.before, args.after, args.after, args.before)
        )
        before, after = first + fourth, second + third
        totals[0] += before
        totals[1] += after
        print(f"| {name} | {first:.2f}, {fourth:.2f} | {second:.2f}, {third:.2f} | {after / before:.2f} |", flush=True)
    print(f"| **all** | {totals[0]:.1f} | {totals[1]:.1f} | **{totals[1] / totals[0]:.2f}** |")


if __name__ == "__main__":
    main()
