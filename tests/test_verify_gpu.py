"""On a CUDA GPU (skipped elsewhere): the ledger agrees with the caching allocator within 1% on every
confirmed fixture; the allocator's history names the allocating line; DataLoader workers' CUDA use is measured for real (fork failure, spawn contexts)."""

from __future__ import annotations

from typing import Any

import pytest

from runtime_cases import CASES, planned_job

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu  # skipped without CUDA (conftest.py)
CONFIRMED = [c for c in CASES if c[2] == "confirmed" and c[1]["kind"] != "loader"]


@pytest.mark.parametrize(("name", "job"), [(c[0], c[1]) for c in CONFIRMED], ids=[c[0] for c in CONFIRMED])
def test_ledger_agrees_with_memory_allocated(name: str, job: dict[str, Any]) -> None:
    from tensorlint.verify.drive import run

    verdict = run(planned_job(name, job, device="cuda"))
    assert verdict.verdict == "confirmed", verdict.describe()
    allocated = verdict.cross_check["cuda_memory_allocated_per_call"]
    assert abs(verdict.bytes_per_call - allocated) <= 0.01 * allocated, verdict.cross_check


def test_the_allocator_names_the_line_of_the_tl001_leak() -> None:
    """The caching allocator's history: the block kept every call was allocated by the relu line."""
    from tensorlint.verify.drive import run

    verdict = run(planned_job("tl001_feature_cache.py", {"kind": "module", "name": "FeatureRecorder"}, device="cuda"))
    assert verdict.verdict == "confirmed" and verdict.device == "cuda:0", verdict.describe()
    assert verdict.allocated_at.endswith("/tl001_feature_cache.py:16 forward"), verdict.allocated_at
    assert "held by FeatureRecorder.features" in verdict.describe()
    assert "; allocated at tl001_feature_cache.py:16 in forward;" in verdict.describe()


def test_forked_workers_fail_after_the_parent_used_cuda() -> None:
    from tensorlint.verify.drive import run

    verdict = run(planned_job("tl003_collate_cuda.py", {"kind": "loader", "name": "load_batches"}, device="cuda"))
    assert verdict.verdict == "confirmed" and verdict.device == "cuda:0"
    assert "DataLoader worker process" in verdict.reason
    assert "Cannot re-initialize CUDA in forked subprocess" in verdict.reason
    assert "RuntimeError: RuntimeError" not in verdict.reason and "\n" not in verdict.reason


def test_spawned_workers_each_hold_a_cuda_context() -> None:
    """As the CLI runs it (a fresh subprocess): no fork error, but GPU memory outside the allocator."""
    from tensorlint.verify.runner import run_jobs

    job = planned_job("tl003_collate_cuda_spawn.py", {"kind": "loader", "name": "load_batches"}, device="auto")
    [verdict] = run_jobs([job], timeout=300).verdicts
    assert verdict.verdict == "confirmed" and verdict.device == "cuda:0", verdict.describe()
    assert "DataLoader workers (spawn) used CUDA" in verdict.reason
    assert 'called .to("cuda") at tl003_collate_cuda_spawn.py:14 collate' in verdict.reason
