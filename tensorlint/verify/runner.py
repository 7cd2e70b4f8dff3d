"""Run the jobs of one file in one fresh interpreter, with a timeout per job: a hung or crashing
target is a verdict.

One child per file: torch is imported and CUDA started once, and every job of the file is
measured in it, each on a freshly imported copy of the user's module (drive.py). A job that
crashes or hangs ends the child; the jobs after it go on in a new one. Never fork from the
linter (a parent that touched CUDA makes forked children fail); the child gets its own process
group so that ending it also ends its DataLoader workers.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tensorlint.verify.verdict import INCONCLUSIVE, Verdict

ENV = {
    "OMP_NUM_THREADS": "1",  # OpenMP spin-waits: 24 s vs 0.44 s for small matmuls on a busy 2-core box
    "MKL_NUM_THREADS": "1",
    "TORCH_COMPILE_DISABLE": "1",  # the ledger sees eager ops only
    "PYTHONHASHSEED": "0",
    "PYTHONUNBUFFERED": "1",
}
CPU_ADDRESS_LIMIT = 8 << 30  # CUDA needs ~18 GiB of address space, so only CPU runs get a limit
POLL = 0.05  # seconds between looks at the child's progress
STARTUP = 600.0  # seconds for the child to import torch: never reached, however loaded the machine
NO_TORCH = "torch is not installed"


@dataclass
class FileRun:
    """What one file's jobs gave: a verdict per job (in job order), the warnings the verified code
    raised (not tensorlint's), how many interpreters were started, and the wall time."""

    verdicts: list[Verdict]
    warnings: list[str] = field(default_factory=list)
    starts: int = 0
    seconds: float = 0.0


def run_job(job: dict[str, Any], timeout: float = 120.0) -> Verdict:
    """One job in its own interpreter."""
    return run_jobs([job], timeout).verdicts[0]


def run_jobs(jobs: list[dict[str, Any]], timeout: float = 120.0, output: str = "hide") -> FileRun:
    """The jobs of one file in one interpreter; `timeout` applies to each job (importing the user's
    module included) that sets none of its own (`"timeout"` in the job); the start-up, importing
    torch, has its own generous limit. `output`: what
    becomes of the code's stdout and stderr: "hide" them, "show" them (ours), or "stderr" for both.

    DataLoader jobs run first: whether a forked worker may use CUDA depends on what the parent
    did before, and no earlier job of the file should decide that for them."""
    started = time.perf_counter()
    order = sorted(range(len(jobs)), key=lambda i: jobs[i].get("kind") != "loader")
    verdicts: dict[int, Verdict] = {}
    warnings: list[str] = []
    starts = 0
    while len(verdicts) < len(jobs):
        pending = [i for i in order if i not in verdicts]
        starts += 1
        done, failed, ending, said = _child([jobs[i] for i in pending], timeout, output)
        warnings += [w for w in said if w not in warnings]
        for position, verdict in done.items():
            verdicts[pending[position]] = verdict
        if failed is not None:
            verdicts[pending[failed]] = ending
        elif not done:  # it ended before any job: the same would happen again
            for index in pending:
                verdicts[index] = ending
    return FileRun([verdicts[i] for i in range(len(jobs))], warnings, starts, time.perf_counter() - started)


def _child(
    jobs: list[dict[str, Any]], timeout: float, output: str
) -> tuple[dict[int, Verdict], int | None, Verdict, list[str]]:
    """Run jobs in one child until it ends: (verdicts by position, the position of the job it ended
    in or None, the verdict for that ending, the warnings it reported)."""
    with tempfile.TemporaryDirectory(prefix="tensorlint-verify-") as folder:
        events = Path(folder) / "events.jsonl"
        events.touch()
        request = Path(folder) / "request.json"
        request.write_text(json.dumps({"jobs": jobs, "events": str(events)}), encoding="utf-8")
        env = {**os.environ, **ENV}
        device = jobs[0].get("device")
        cpu_only = device == "cpu" or not Path("/dev/nvidiactl").exists()
        if device == "cpu":
            env["CUDA_VISIBLE_DEVICES"] = ""
        cwd = jobs[0].get("cwd") or (str(Path(jobs[0]["file"]).resolve().parent) if "file" in jobs[0] else None)
        done: dict[int, Verdict] = {}
        warnings: list[str] = []
        current: int | None = None
        started = time.perf_counter()
        deadline = started + STARTUP
        # Files, not pipes: a process the target forked may keep a pipe open long after the
        # child is gone; the run ends when the child does. The user's output is not ours to print.
        with (
            open(request, encoding="utf-8") as stdin,
            open(Path(folder) / "stdout", "w+b") as stdout,
            open(Path(folder) / "stderr", "w+b") as stderr,
        ):
            shown = {"hide": (stdout, stderr), "show": (None, None), "stderr": (sys.stderr, sys.stderr)}[output]
            process = subprocess.Popen(
                [sys.executable, "-m", "tensorlint.verify.child"],
                stdin=stdin,
                stdout=shown[0],
                stderr=shown[1],
                env=env,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=_limits if cpu_only and sys.platform == "linux" else None,
            )
            timed_out = False
            with open(events, encoding="utf-8") as reader:
                try:
                    while True:
                        ended = process.poll() is not None
                        for event in _read(reader):
                            if "start" in event:
                                current = int(event["start"])
                                deadline = time.perf_counter() + float(jobs[current].get("timeout", timeout))
                            elif "done" in event:
                                done[int(event["done"])] = Verdict.from_json(event["verdict"])
                                current = None
                            warnings += [w for w in event.get("warnings", ()) if w not in warnings]
                        if ended:
                            break
                        if time.perf_counter() > deadline:
                            timed_out = True
                            break
                        time.sleep(POLL)
                finally:
                    _kill(process)
            stderr.seek(0)
            text = stderr.read().decode("utf-8", "replace")
        if timed_out:
            limit = float(jobs[current].get("timeout", timeout)) if current is not None else STARTUP
            ending = Verdict(INCONCLUSIVE, reason=f"timed out after {limit:g} s", device="")
        else:
            ending = Verdict(
                INCONCLUSIVE, reason=_ending(process.returncode, time.perf_counter() - started, text), device=""
            )
        if current is None and len(done) < len(jobs) and done:
            current = max(done) + 1  # it ended between two jobs: blame the next one
        return done, current, ending, warnings


def _read(reader: Any) -> list[dict[str, Any]]:
    """The complete lines written since the last read (a line being written is read next time)."""
    events: list[dict[str, Any]] = []
    while True:
        position = reader.tell()
        line = reader.readline()
        if not line.endswith("\n"):
            reader.seek(position)
            return events
        events.append(json.loads(line))


def _ending(status: int, seconds: float, stderr: str) -> str:
    """How a child that left no verdict ended: a signal (a crash) or an exit (sys.exit, os._exit)."""
    if "No module named 'torch'" in stderr:
        return f"{NO_TORCH}: pip install 'tensorlint[verify]'"
    if status < 0:
        try:
            how = f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            how = f"was killed by signal {-status}"
    else:
        how = f"exited with status {status} before a verdict"
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    return f"the target {how} after {seconds:.1f} s" + (f": {last}" if last else "")


def _limits() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (CPU_ADDRESS_LIMIT, CPU_ADDRESS_LIMIT))


def _kill(process: subprocess.Popen[bytes]) -> None:
    """End the child's whole process group (its DataLoader workers too), by its own id."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
