"""The verifier runs the user's code: whatever that code does, the answer is a verdict, on CPU.

No wall-clock bound that a loaded machine can break: only the target that hangs gets a short
timeout (it times out whatever the load); the others get one they never reach when they work."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import run_tensorlint
from tensorlint.verify.runner import run_job
from tensorlint.verify.verdict import INCONCLUSIVE, Verdict

pytest.importorskip("torch")

# Each target is a `step()` the verifier calls; what it does to the process is the test.
HOSTILE_STEPS = {
    "hangs": ("import time\n\ndef step():\n    time.sleep(3600)\n", "timed out after 10 s"),
    "aborts": ("import os\n\ndef step():\n    os.abort()\n", "the target was killed by SIGABRT"),
    "segfaults": ("import ctypes\n\ndef step():\n    ctypes.string_at(0)\n", "the target was killed by SIGSEGV"),
    "calls_sys_exit": (
        "import sys\n\ndef step():\n    sys.exit(3)\n",
        "the target exited with status 3 before a verdict",
    ),
    "calls_os_exit": (
        "import os\n\ndef step():\n    os._exit(0)\n",
        "the target exited with status 0 before a verdict",
    ),
    "forks_and_lingers": (
        "import os, time\n\ndef step():\n    if os.fork() == 0:\n        time.sleep(3600)\n        os._exit(0)\n",
        "",  # the parent's verdict: the lingering child must not hold the run (it would time out)
    ),
    "exhausts_memory": (
        "def step():\n    hoard = bytearray(64 << 30)\n",
        "the target raised MemoryError",  # the address-space cap on CPU turns it into an exception
    ),
    "prints_to_stdout_and_closes_it": ("import os\n\ndef step():\n    print('x' * 10**6)\n    os.close(1)\n", ""),
}
HANG_TIMEOUT = 10.0
TIMEOUT = 900.0  # never reached by a target that ends, however loaded the machine


def _job(path: Path) -> dict[str, object]:
    return {"kind": "call", "file": str(path), "name": "step", "device": "cpu", "calls": 3, "warmup": 0}


def test_hostile_targets_are_verdicts_never_a_hang_or_a_crash(tmp_path: Path) -> None:
    paths = {}
    for name, (source, _) in HOSTILE_STEPS.items():
        paths[name] = tmp_path / f"{name}.py"
        paths[name].write_text(source, encoding="utf-8")

    def verify(name: str) -> Verdict:
        return run_job(_job(paths[name]), HANG_TIMEOUT if name == "hangs" else TIMEOUT)

    with ThreadPoolExecutor(max_workers=4) as pool:
        verdicts = dict(zip(paths, pool.map(verify, paths), strict=True))
    for name, (_, expected) in HOSTILE_STEPS.items():
        verdict = verdicts[name]
        assert expected in verdict.reason, (name, verdict)
        if expected:
            assert verdict.verdict == INCONCLUSIVE, (name, verdict)
    assert "timed out" not in verdicts["forks_and_lingers"].reason


def test_the_command_line_reports_a_crashing_target_and_exits_normally(tmp_path: Path) -> None:
    (tmp_path / "crash.py").write_text("import os\n\ndef step():\n    os.abort()\n", encoding="utf-8")
    target = f"{tmp_path / 'crash.py'}::step"
    result = run_tensorlint("verify", target, "--output-format", "json", cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    [record] = json.loads(result.stdout)
    assert record["runtime"]["verdict"] == INCONCLUSIVE
    assert "killed by SIGABRT" in record["runtime"]["reason"]
    assert "Traceback" not in result.stderr
