"""Where a cold run's time goes: one process, sampled on CPU time, by phase and by function.

    python bench/profile.py PATH [--interval MS] [--top N]

Runs `tensorlint check --no-cache -j 1` on PATH in this process with a profiling timer
(`SIGPROF`, every `--interval` milliseconds of CPU; Unix only) and records the Python stack at
each tick. Prints the share of the samples in each phase of the engine (the checked files' flow
walk, building their trees, their index, the modules their imports resolve to, everything outside
the analysis), then the functions with the largest inclusive and self shares (not the call chain
that every sample shares). No tracing hook
runs between ticks, so the shares are not skewed toward small functions as cProfile's are; a
function that runs in C (`ast.parse`, `os.listdir`) counts as its Python caller's line.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections import Counter
from pathlib import Path
from types import FrameType

# Phases, tested in order on a sample's stack (outermost first): the first that matches names it.
_PHASES = (
    ("imported modules (build, index, body)", "project.py:_analyze"),
    ("trees of the checked files", "from_ast.py:build_module"),
    ("index of the checked files", "index.py:build_index"),
    ("flow walk of the checked files", "flow.py:analyze"),
    ("rules", "rules/"),
)


def _stack(frame: FrameType | None) -> tuple[str, ...]:
    names = []
    while frame is not None:
        code = frame.f_code
        names.append(f"{'/'.join(Path(code.co_filename).parts[-2:])}:{code.co_name}")
        frame = frame.f_back
    return tuple(reversed(names))


def _phase(stack: tuple[str, ...]) -> str:
    if not any(name.endswith("engine.py:_analyze") for name in stack):
        return "outside the analysis (start-up, files, screen, output)"
    for phase, marker in _PHASES:
        if any(marker in name for name in stack):
            return phase
    return "other analysis"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--interval", type=float, default=0.5, help="milliseconds of CPU between samples")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    samples: Counter[tuple[str, ...]] = Counter()

    def record(signum: int, frame: FrameType | None) -> None:
        samples[_stack(frame)] += 1

    signal.signal(signal.SIGPROF, record)
    seconds = args.interval / 1000
    signal.setitimer(signal.ITIMER_PROF, seconds, seconds)
    from tensorlint.cli import main as tensorlint

    try:
        tensorlint(["check", "--no-cache", "--isolated", "-j", "1", "--exit-zero", "-q", str(args.path)])
    except SystemExit:
        pass
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
    total = sum(samples.values()) or 1
    phases: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    for stack, count in samples.items():
        phases[_phase(stack)] += count
        for name in set(stack):
            inclusive[name] += count
        own[stack[-1]] += count
    print(f"{total} samples of {args.interval} ms of CPU\n\n| phase | share |\n|---|---:|")
    for phase, count in phases.most_common():
        print(f"| {phase} | {count / total:.1%} |")
    chain = {name for name, count in inclusive.items() if count >= 0.9 * total}  # cli, runner, engine: every sample
    for title, counter in (("inclusive", inclusive), ("self", own)):
        print(f"\n| function ({title}) | share |\n|---|---:|")
        for name, count in [(n, c) for n, c in counter.most_common() if n not in chain][: args.top]:
            print(f"| `{name}` | {count / total:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
