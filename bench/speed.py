"""Time tensorlint against ruff, flake8 and TorchFix on the real-world corpus, in one run.

    python bench/speed.py [--runs 3] [--torchfix-runs 1] [--sample K] [--packages NAME ...] [--dest DIR]
    python bench/speed.py --precommit [--runs 5] [--dest DIR]

Every tool checks the same files with its default rules and its default parallelism (all
cores): the corpus fetched by bench/corpus.py (`DIR/corpus`), or with `--sample K` every K-th
file of it, checked in place (imports resolve to the files around them, as in a real tree), for
machines where TorchFix on everything takes too long; with `--copy`, a copy of that sample
(`DIR/sample-K`), where each file is checked alone; with `--packages`, each named package of
the corpus as its own tree, one table each (issue 17's targets are per package). ruff and flake8 live in one virtualenv,
TorchFix in its own (it caps libcst below 1.6); both are created under `DIR/venvs` on first use.
The tools run in rounds, each tool once per round in turn (TorchFix in the first
`--torchfix-runs` rounds only). Each timing is the median over rounds of the whole command, wall
clock and CPU time (user + system, workers included); each ratio is the median over rounds of the
two tools' times in the same round, which the machine's drift over minutes moves far less than a
ratio of medians. Peak memory is the largest total resident size of the tool's process tree,
sampled every 20 ms. The result is a Markdown table on stdout (for docs/performance.md) and
`DIR/speed.json`.

`--precommit` times the pre-commit shape instead: few files, many runs, where start-up decides
the wait. Each tool runs as its hook does (`--force-exclude` for tensorlint and ruff) on fixed
files of the corpus (one large, one small, one the screen rules out, five of one package), more
runs each; memory is not sampled there (the 20 ms sampling would round every time up). The
result is a Markdown table and `DIR/speed-precommit.json`.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_DEST, ROOT, byte_compile, fetch

TENSORLINT = [sys.executable, "-m", "tensorlint", "--exit-zero", "-q"]


@dataclass
class Timing:
    name: str
    seconds: float  # median wall-clock time
    runs: list[float]  # wall-clock time of each round (a tool left out of a round: not listed)
    cpu_seconds: float  # median user + system time of the whole process tree
    peak_mib: float  # largest total RSS of the process tree over the runs
    files: int
    rounds: list[int]  # the round of each run, to pair it with the other tools' runs of that round

    @property
    def files_per_second(self) -> float:
        return self.files / self.seconds


def ensure_venv(folder: Path, requirements: list[str]) -> Path:
    """A virtualenv with `requirements`, created once; returns its bin folder."""
    bin_dir = folder / "bin"
    if not (folder / ".complete").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
        subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", *requirements], check=True)
        (folder / ".complete").touch()
    return bin_dir


def _tree_rss_kib(root_pid: int) -> int:
    """Total resident memory of a process and all its descendants, from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/statm", encoding="ascii") as statm:
                rss[int(entry)] = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # every waited-for descendant, workers included
    return usage.ru_utime + usage.ru_stime


def measure(
    command: list[str], cwd: Path, env: dict[str, str] | None = None, *, memory: bool = True
) -> tuple[float, float, float]:
    """Wall-clock seconds, peak MiB (0 when `memory` is off) and CPU seconds of one run; the
    tool's output is discarded. Sampling memory rounds the wall time up to its 20 ms period."""
    cpu_before = _children_cpu()
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while memory and process.poll() is None:
        peak = max(peak, _tree_rss_kib(process.pid))
        time.sleep(0.02)
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    process.wait()
    elapsed = time.perf_counter() - start
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{command[:3]} exited {process.returncode}: {stderr[-2000:]}")
    return elapsed, peak / 1024, _children_cpu() - cpu_before


@dataclass
class Tool:
    name: str
    command: list[str]
    before: Callable[[], None] | None = None  # run untimed before each timed run (clear a cache)
    rounds: int | None = None  # TorchFix is slow: it runs in the first rounds only


def interleaved(tools: list[Tool], cwd: Path, files: int, runs: int, *, memory: bool = True) -> list[Timing]:
    """Each round runs every tool once, in turn: the machine's speed drifts over minutes (2x has
    been seen here), and tools timed in the same round saw the same machine, so the ratio of a
    round's two times is steadier than the ratio of two medians taken minutes apart."""
    samples: dict[str, list[tuple[int, float, float, float]]] = {tool.name: [] for tool in tools}
    for round_ in range(runs):
        for tool in tools:
            if tool.rounds is not None and round_ >= tool.rounds:
                continue
            if tool.before is not None:
                tool.before()
            wall, peak, cpu = measure(tool.command, cwd, memory=memory)
            samples[tool.name].append((round_, wall, peak, cpu))
            print(f"  round {round_ + 1}, {tool.name}: {wall:.2f} s, {cpu:.2f} s CPU, {peak:.0f} MiB", file=sys.stderr)
    return [
        Timing(
            name,
            statistics.median(wall for _, wall, _, _ in runs_),
            [wall for _, wall, _, _ in runs_],
            statistics.median(cpu for _, _, _, cpu in runs_),
            max(peak for _, _, peak, _ in runs_),
            files,
            [round_ for round_, _, _, _ in runs_],
        )
        for name, runs_ in samples.items()
    ]


def paired_ratio(a: Timing, b: Timing) -> float:
    """The median over the rounds both ran in of a's time over b's."""
    b_by_round = dict(zip(b.rounds, b.runs, strict=True))
    return statistics.median(wall / b_by_round[r] for r, wall in zip(a.rounds, a.runs, strict=True) if r in b_by_round)


def sample(corpus: Path, every: int) -> list[str]:
    """Every `every`-th file of the corpus (in sorted order), as paths relative to it: each tool
    checks them in place, so that imports resolve to the files around them as in a real tree."""
    if every <= 1:
        return ["."]
    return [str(path.relative_to(corpus)) for path in sorted(corpus.rglob("*.py"))[::every]]


def copied_sample(corpus: Path, every: int) -> Path:
    """A copy of every `every`-th file (paths kept), where imports do not resolve: each file is
    checked alone, which measures the per-file cost without the project's other modules."""
    target = corpus.parent / f"sample-{every}"
    if not (target / ".complete").exists():
        shutil.rmtree(target, ignore_errors=True)
        for path in sorted(corpus.rglob("*.py"))[::every]:
            copy = target / path.relative_to(corpus)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, copy)
        (target / ".complete").touch()
    return target


def count_files(corpus: Path, targets: list[str]) -> int:
    return sum(1 for _ in corpus.rglob("*.py")) if targets == ["."] else len(targets)


def memory_scaling(corpus: Path, every: int) -> list[tuple[int, float]]:
    """(files, peak MiB) of cold tensorlint runs over nested samples: 1/4, 1/2 and all of the sample."""
    points = []
    for factor in (4, 2, 1):
        targets = sample(corpus, every * factor)
        _, peak, _ = measure([*TENSORLINT, "--no-cache", *targets], corpus)
        points.append((count_files(corpus, targets), peak))
        print(f"  memory: {points[-1][0]} files, {peak:.0f} MiB", file=sys.stderr)
    return points


def run_all(corpus: Path, targets: list[str], dest: Path, runs: int, torchfix_runs: int) -> list[Timing]:
    files = count_files(corpus, targets)
    peers = ensure_venv(dest / "venvs" / "peers", ["-c", str(ROOT / "constraints.txt"), "ruff", "flake8"])
    torchfix = ensure_venv(dest / "venvs" / "torchfix", ["torchfix==0.7.0"])
    work = Path(tempfile.mkdtemp(prefix="tensorlint-bench-"))
    tl_cache, ruff_cache = work / "tensorlint-cache", work / "ruff-cache"

    def clear_tensorlint_cache() -> None:
        shutil.rmtree(tl_cache, ignore_errors=True)

    cached = [*TENSORLINT, "--cache-dir", str(tl_cache), *targets]
    ruff = [str(peers / "ruff"), "check", "--isolated", "--exit-zero", "--quiet"]
    ruff_cached = [*ruff, "--cache-dir", str(ruff_cache), *targets]
    tools = [
        Tool("tensorlint cold", cached, before=clear_tensorlint_cache),
        Tool("tensorlint warm", cached),  # reads what this round's cold run wrote
        Tool("tensorlint cold -j1", [*TENSORLINT, "--no-cache", "-j", "1", *targets]),
        Tool("ruff", [*ruff, "--no-cache", *targets]),
        Tool("ruff cached", ruff_cached, before=_once(ruff_cached, corpus)),
        Tool("flake8", [str(peers / "flake8"), "--isolated", "--exit-zero", *targets]),
        Tool("TorchFix", [str(torchfix / "torchfix"), *targets], rounds=torchfix_runs),
    ]
    results = interleaved(tools, corpus, files, runs)
    shutil.rmtree(work, ignore_errors=True)
    return results


# The pre-commit shape: a commit names a few files, and the hook runs at every commit. Fixed files
# of the corpus (paths relative to it), so that rounds compare.
_CONNECTORS = "lightning-2.6.6/lightning/pytorch/trainer/connectors"
PRECOMMIT_CASES = {
    "1 large file": ["lightning-2.6.6/lightning/pytorch/trainer/trainer.py"],  # 1786 lines
    "1 small file": ["timm-1.0.31/timm/optim/adafactor_bv.py"],  # 315 lines
    # 71 lines that name nothing the screen looks for: never parsed
    "1 file screened out": ["lightning-2.6.6/lightning/fabric/plugins/environments/cluster_environment.py"],
    "5 files of one package": [
        f"{_CONNECTORS}/{name}_connector.py" for name in ("accelerator", "callback", "checkpoint", "data", "signal")
    ],
}


def run_precommit(corpus: Path, dest: Path, runs: int) -> dict[str, list[Timing]]:
    """Each case of PRECOMMIT_CASES, each tool as its pre-commit hook runs it; warm runs after a filling run."""
    peers = ensure_venv(dest / "venvs" / "peers", ["-c", str(ROOT / "constraints.txt"), "ruff", "flake8"])
    work = Path(tempfile.mkdtemp(prefix="tensorlint-precommit-"))
    results: dict[str, list[Timing]] = {}
    for case, targets in PRECOMMIT_CASES.items():
        print(f"{case}:", file=sys.stderr)
        tl_cache, ruff_cache = work / case / "tensorlint-cache", work / case / "ruff-cache"
        clear_tensorlint_cache = functools.partial(shutil.rmtree, tl_cache, ignore_errors=True)
        tensorlint = [*TENSORLINT, "--force-exclude", "--cache-dir", str(tl_cache), *targets]
        ruff = [str(peers / "ruff"), "check", "--isolated", "--exit-zero", "--quiet", "--force-exclude"]
        ruff_cached = [*ruff, "--cache-dir", str(ruff_cache), *targets]
        flake8 = [str(peers / "flake8"), "--isolated", "--exit-zero", *targets]
        tools = [
            Tool("tensorlint cold", tensorlint, before=clear_tensorlint_cache),
            Tool("tensorlint warm", tensorlint),  # reads what this round's cold run wrote
            Tool("ruff", [*ruff, "--no-cache", *targets]),
            Tool("ruff cached", ruff_cached, before=_once(ruff_cached, corpus)),
            Tool("flake8", flake8),
        ]
        results[case] = interleaved(tools, corpus, len(targets), runs, memory=False)
    shutil.rmtree(work, ignore_errors=True)
    return results


def _once(command: list[str], cwd: Path) -> Callable[[], None]:
    """A `before` that runs `command` the first time only: it fills a cache that the timed runs read."""
    done: list[bool] = []

    def run() -> None:
        if not done:
            measure(command, cwd, memory=False)
            done.append(True)

    return run


def precommit_markdown(results: dict[str, list[Timing]]) -> str:
    lines = [
        "| files | tool | median wall s | runs (s) | median CPU s | cold / tool (wall, paired) "
        "| warm / tool (wall, paired) |",
        "|---|---|---:|---|---:|---:|---:|",
    ]
    for case, timings in results.items():
        cold, warm = timings[0], timings[1]
        for t in timings:
            runs = ", ".join(f"{s:.3f}" for s in t.runs)
            lines.append(
                f"| {case} | {t.name} | {t.seconds:.3f} | {runs} | {t.cpu_seconds:.3f} "
                f"| {paired_ratio(cold, t):.2f} | {paired_ratio(warm, t):.2f} |"
            )
    return "\n".join(lines) + "\n"


def markdown(results: list[Timing]) -> str:
    """One row per tool; the ratios are medians over rounds of the two tools' times in one round."""
    by_name = {t.name: t for t in results}
    cold, warm = by_name["tensorlint cold"], by_name["tensorlint warm"]
    lines = [
        "| tool | median wall s | runs (s) | files/s | median CPU s | peak MiB "
        "| cold / tool (wall, paired) | cold / tool (CPU, medians) | warm / tool (wall, paired) |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for t in results:
        runs = ", ".join(f"{s:.2f}" for s in t.runs)
        lines.append(
            f"| {t.name} | {t.seconds:.2f} | {runs} | {t.files_per_second:.1f} | {t.cpu_seconds:.2f} | {t.peak_mib:.0f} "
            f"| {paired_ratio(cold, t):.3f} | {cold.cpu_seconds / t.cpu_seconds:.3f} | {paired_ratio(warm, t):.3f} |"
        )
    return "\n".join(lines) + "\n"


def machine() -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor(),
    )
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {platform.platform()}"


def main() -> None:
    byte_compile(ROOT)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    parser.add_argument("--runs", type=int, help="runs per tool, median reported (default 3; 5 with --precommit)")
    parser.add_argument("--torchfix-runs", type=int, default=1, help="TorchFix is slow: runs for it alone")
    parser.add_argument("--sample", type=int, default=1, metavar="K", help="time every K-th file only")
    parser.add_argument("--copy", action="store_true", help="check a copy of the sample: no imports resolve")
    parser.add_argument("--precommit", action="store_true", help="the pre-commit shape: few files, many runs")
    parser.add_argument("--packages", nargs="*", metavar="NAME", help="time these folders of the corpus one by one")
    options = parser.parse_args()
    corpus = fetch(options.dest)
    if options.precommit:
        precommit(corpus, options.dest, options.runs or 5)
        return
    options.runs = options.runs or 3
    if options.packages:
        for name in options.packages:
            load_before = os.getloadavg()
            results = run_all(corpus / name, ["."], options.dest, options.runs, options.torchfix_runs)
            print(f"{time.strftime('%Y-%m-%d')}, {machine()}, {name}: {results[0].files} files")
            print(f"load average (1, 5, 15 min) before: {load_before}, after: {os.getloadavg()}\n")
            print(markdown(results), flush=True)
        return
    every = max(options.sample, 1)
    if options.copy:
        corpus, every = copied_sample(corpus, every), 1
    targets = sample(corpus, every)
    load_before = os.getloadavg()
    results = run_all(corpus, targets, options.dest, options.runs, options.torchfix_runs)
    scaling = memory_scaling(corpus, every)
    report = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "load average before, after": [load_before, os.getloadavg()],
        "corpus": str(corpus),
        "every": every,
        "results": [asdict(t) for t in results],
        "memory scaling (files, peak MiB)": scaling,
    }
    (options.dest / "speed.json").write_text(json.dumps(report, indent=2))
    print(f"{report['date']}, {report['machine']}, {results[0].files} files of {corpus} (every {every}th)")
    print(f"load average (1, 5, 15 min) before: {load_before}, after: {os.getloadavg()}\n")
    print(markdown(results))
    print("| files | peak MiB (tensorlint cold) |\n|---:|---:|")
    print("\n".join(f"| {files} | {peak:.0f} |" for files, peak in scaling))


def precommit(corpus: Path, dest: Path, runs: int) -> None:
    load_before = os.getloadavg()
    results = run_precommit(corpus, dest, runs)
    report = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "load average before, after": [load_before, os.getloadavg()],
        "corpus": str(corpus),
        "cases": PRECOMMIT_CASES,
        "results": {case: [asdict(t) for t in timings] for case, timings in results.items()},
    }
    (dest / "speed-precommit.json").write_text(json.dumps(report, indent=2))
    print(f"{report['date']}, {report['machine']}, the pre-commit shape, {runs} runs each, files of {corpus}")
    print(f"load average (1, 5, 15 min) before: {load_before}, after: {os.getloadavg()}\n")
    print(precommit_markdown(results))


if __name__ == "__main__":
    main()
