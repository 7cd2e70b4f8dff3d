"""Each runtime fixture gets the verdict its docstring promises, driven as the CLI would drive it.

In-process (one torch import for all of them); tests/test_verify_cli.py covers the subprocess.
"""

from __future__ import annotations

from typing import Any

import pytest

from helpers import FIXTURES

torch = pytest.importorskip("torch")

RUNTIME = FIXTURES / "runtime"
KIB = 1024

# (file, job, verdict, bytes per call or None, text the holders must contain)
CASES: list[tuple[str, dict[str, Any], str, int | None, str]] = [
    ("tl001_feature_cache.py", {"kind": "module", "name": "FeatureRecorder"}, "confirmed", 16 * KIB, "FeatureRecorder.features"),
    ("tl001_feature_cache_fixed.py", {"kind": "module", "name": "FeatureRecorder"}, "not reproduced", 0, ""),
    ("tl001_deque_maxlen.py", {"kind": "module", "name": "RecentFeatures"}, "not reproduced", None, ""),
    ("tl001_detach_clone_cache.py", {"kind": "module", "name": "CloneCache"}, "confirmed", 16 * KIB, "CloneCache.cache"),
    ("tl002_closure_leaky.py", {"kind": "call", "name": "register_step"}, "confirmed", 128 * KIB, "closure of register_step"),
    ("tl002_closure_fixed.py", {"kind": "call", "name": "register_step"}, "not reproduced", 0, ""),
    ("tl004_eval_total_loss.py", {"kind": "loop", "name": "evaluate", "line": "total_loss +="}, "confirmed", None, "autograd graph of local `total_loss`"),
    ("tl004_train_total_loss.py", {"kind": "loop", "name": "train", "line": "total_loss +="}, "host-only", 0, ""),
    ("tl004_item_fixed.py", {"kind": "loop", "name": "evaluate", "line": "total_loss +="}, "not reproduced", 0, ""),
    ("pool_del_loop_variable.py", {"kind": "call", "name": "step"}, "confirmed", 128 * KIB, "TensorManager._tensors"),
    ("kept_exception.py", {"kind": "call", "name": "step"}, "confirmed", 128 * KIB, "traceback of RuntimeError kept in global `errors`"),
    ("tl003_collate_cuda.py", {"kind": "loader", "name": "load_batches"}, "confirmed", None, ""),
    ("tl003_collate_fixed.py", {"kind": "loader", "name": "load_batches"}, "not reproduced", None, ""),
]  # fmt: skip


def _job(name: str, job: dict[str, Any], calls: int = 20, device: str = "cpu") -> dict[str, Any]:
    """A job as the CLI plans it; a loop's line is given by the text on it."""
    job = {**job, "file": str(RUNTIME / name), "calls": calls, "warmup": 3, "device": device}
    if isinstance(job.get("line"), str):
        lines = (RUNTIME / name).read_text(encoding="utf-8").splitlines()
        job["line"] = max(i for i, line in enumerate(lines, 1) if job["line"] in line)  # not the docstring
    return job


@pytest.mark.parametrize(("name", "job", "verdict", "per_call", "holder"), CASES, ids=[c[0] for c in CASES])
def test_fixture_verdict(name: str, job: dict[str, Any], verdict: str, per_call: int | None, holder: str) -> None:
    from tensorlint.verify.drive import run

    result = run(_job(name, job, calls=12))
    assert result.verdict == verdict, result.describe()
    if per_call is not None:
        assert result.bytes_per_call == per_call, result.describe()
    if holder:
        assert holder in " ".join(h.path for h in result.holders), result.holders


def test_eval_total_loss_keeps_the_activations_of_every_batch() -> None:
    from tensorlint.verify.drive import run

    result = run(_job("tl004_eval_total_loss.py", {"kind": "loop", "name": "evaluate", "line": "total_loss +="}))
    # Per batch: the 64x512 input the graph saved for addmm and the 64x512 ReLU output.
    assert result.bytes_per_call >= 256 * KIB
    assert result.holders[0].kind == "autograd graph"


def test_simulated_workers_report_pid_and_line() -> None:
    import os

    from tensorlint.verify.drive import run

    result = run({"kind": "loader", "name": "load_batches", "file": str(RUNTIME / "tl003_collate_cuda.py")})
    assert result.device == "cpu (simulated CUDA)"
    assert result.workers and all(w["pid"] != os.getpid() for w in result.workers)
    assert {w["site"].rsplit("/", 1)[-1] for w in result.workers} == {"tl003_collate_cuda.py:16 collate"}


def test_a_module_needing_arguments_needs_a_spec(tmp_path: Any) -> None:
    from tensorlint.verify.drive import run

    source = "import torch\n\nclass Net(torch.nn.Module):\n    def __init__(self, width):\n        super().__init__()\n"
    (tmp_path / "net.py").write_text(source)
    result = run({"kind": "module", "name": "Net", "file": str(tmp_path / "net.py")})
    assert result.verdict == "inconclusive"
    assert result.reason.startswith("needs a spec: Net() needs constructor arguments")
