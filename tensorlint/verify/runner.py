"""Run one job in a fresh interpreter with a timeout: a hung or crashing target is a verdict.

Never fork from the linter (a parent that touched CUDA makes forked children fail); the child
gets its own process group so that a timeout also ends its DataLoader workers.
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


def run_job(job: dict[str, Any], timeout: float = 120.0) -> Verdict:
    with tempfile.TemporaryDirectory(prefix="tensorlint-verify-") as folder:
        result = Path(folder) / "verdict.json"
        job = {**job, "result": str(result)}
        env = {**os.environ, **ENV}
        cpu_only = job.get("device") == "cpu" or not Path("/dev/nvidiactl").exists()
        if job.get("device") == "cpu":
            env["CUDA_VISIBLE_DEVICES"] = ""
        cwd = str(Path(job["file"]).resolve().parent) if "file" in job else None
        started = time.perf_counter()
        (Path(folder) / "job.json").write_text(json.dumps(job), encoding="utf-8")
        # Files, not pipes: a process the target forked may keep a pipe open long after the
        # child is gone; the run ends when the child does.
        with (
            open(Path(folder) / "job.json", encoding="utf-8") as stdin,
            open(Path(folder) / "stdout", "w+b") as stdout,
            open(Path(folder) / "stderr", "w+b") as stderr_file,
        ):
            process = subprocess.Popen(
                [sys.executable, "-m", "tensorlint.verify.child"],
                stdin=stdin,
                stdout=stdout,
                stderr=stderr_file,
                env=env,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=_limits if cpu_only and sys.platform == "linux" else None,
            )
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                return Verdict(INCONCLUSIVE, reason=f"timed out after {timeout:g} s", device="")
            finally:
                _kill(process)
            stderr_file.seek(0)
            stderr = stderr_file.read().decode("utf-8", "replace")
        seconds = time.perf_counter() - started
        if result.exists():
            verdict = Verdict.from_json(json.loads(result.read_text(encoding="utf-8")))
            return verdict
        return Verdict(INCONCLUSIVE, reason=_ending(process.returncode, seconds, stderr), device="")


def _ending(status: int, seconds: float, stderr: str) -> str:
    """How a child that left no verdict ended: a signal (a crash) or an exit (sys.exit, os._exit)."""
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
