"""One subprocess per file: every job of the file measured in it, each isolated from the others;
a job that crashes or hangs costs its own verdict only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tensorlint.verify.runner import run_jobs

pytest.importorskip("torch")

SOURCE = """
import os
import time

import torch

CACHE = []


def leak():
    CACHE.append(torch.ones(256))


def clean():
    if CACHE:
        raise RuntimeError("saw the cache of another job")
    torch.ones(256).sum()


def crash():
    os.abort()


def hang():
    time.sleep(3600)
"""


def _jobs(path: Path, *names: str) -> list[dict[str, Any]]:
    return [{"kind": "call", "file": str(path), "name": n, "device": "cpu", "calls": 4, "warmup": 1} for n in names]


@pytest.fixture
def module(tmp_path: Path) -> Path:
    path = tmp_path / "targets.py"
    path.write_text(SOURCE, encoding="utf-8")
    return path


def test_the_jobs_of_a_file_share_one_process_and_nothing_else(module: Path) -> None:
    run = run_jobs(_jobs(module, "leak", "clean", "leak"), timeout=900)
    assert run.starts == 1
    assert [v.verdict for v in run.verdicts] == ["confirmed", "not reproduced", "confirmed"], run.verdicts
    assert run.verdicts[2].bytes_per_call == 1024  # the second leak starts from a fresh module too


def test_a_crash_costs_only_its_own_verdict(module: Path) -> None:
    run = run_jobs(_jobs(module, "leak", "crash", "clean"), timeout=900)
    assert run.starts == 2
    assert [v.verdict for v in run.verdicts] == ["confirmed", "inconclusive", "not reproduced"]
    assert "killed by SIGABRT" in run.verdicts[1].reason


def test_a_hang_costs_only_its_own_verdict(module: Path) -> None:
    """The timeout is per job: the hang always reaches its own, and the job after it, with one it
    never reaches however loaded the machine, is measured anew."""
    hang, leak = _jobs(module, "hang", "leak")
    run = run_jobs([{**hang, "timeout": 10}, leak], timeout=900)
    assert run.verdicts[0].reason == "timed out after 10 s"
    assert run.verdicts[1].verdict == "confirmed"
