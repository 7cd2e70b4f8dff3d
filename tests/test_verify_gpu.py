"""On a CUDA GPU: the ledger agrees with the caching allocator within 1% on every confirmed fixture."""

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


def test_forked_workers_fail_after_the_parent_used_cuda() -> None:
    from tensorlint.verify.drive import run

    verdict = run(planned_job("tl003_collate_cuda.py", {"kind": "loader", "name": "load_batches"}, device="cuda"))
    assert verdict.verdict == "confirmed"
    assert "Cannot re-initialize CUDA in forked subprocess" in verdict.reason
