"""The allocating line of a CUDA leak, read from the caching allocator's snapshot (the GPU test is
in test_verify_gpu.py); here, on a snapshot of the shape torch writes, and the verdict's words."""

from __future__ import annotations

from typing import Any

import pytest

from tensorlint.verify.verdict import Site, Verdict

pytest.importorskip("torch")

MODEL = "/project/model.py"


def _block(state: str, size: int, *frames: tuple[str, int, str]) -> dict[str, Any]:
    return {"state": state, "size": size, "frames": [{"filename": f, "line": n, "name": fn} for f, n, fn in frames]}


def test_the_innermost_frame_in_the_users_file_of_the_most_blocks_still_allocated() -> None:
    from tensorlint.verify.sampler import allocating_line

    torch_frame = ("/site-packages/torch/nn/modules/module.py", 1750, "_call_impl")
    kept = _block("active_allocated", 16384, (MODEL, 16, "forward"), torch_frame, (MODEL, 40, "step"))
    snapshot = {
        "segments": [
            {
                "blocks": [
                    kept,
                    kept,
                    _block("inactive", 65536, (MODEL, 17, "forward")),
                    _block("active_allocated", 512),
                ]
            },
            {"blocks": [_block("active_allocated", 65536, (MODEL, 18, "forward")), kept]},
        ]
    }
    assert allocating_line(snapshot, MODEL) == f"{MODEL}:16 forward"
    assert allocating_line(snapshot, "/project/other.py") == ""
    assert allocating_line({}, MODEL) == ""  # a torch without `_snapshot`


def test_the_verdict_says_where_the_allocator_saw_it_allocated() -> None:
    site = Site("/project/model.py:16 forward", "relu", "float32[8, 512]", 20, 327680)
    common: dict[str, Any] = {"verdict": "confirmed", "calls": 20, "bytes_per_call": 16384.0, "sites": (site,)}
    on_cuda = Verdict(**common, device="cuda:0", allocated_at=f"{MODEL}:16 forward").describe()
    assert "; allocated at model.py:16 in forward;" in on_cuda
    on_cpu = Verdict(**common).describe()  # the ledger's own site
    assert "; allocated at model.py:16 forward (relu, float32[8, 512]);" in on_cpu
