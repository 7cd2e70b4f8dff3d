"""The runtime fixtures (fixtures/runtime/) and the verdict each must get: the CPU tests
(test_verify_fixtures.py), the GPU tests (test_verify_gpu.py) and tests/gpu_suite.py share them.

The fixtures follow the device (`cuda` where there is one), so each expectation that depends
on it says what it is on each: `on_device(cpu=..., cuda=...)`."""

from __future__ import annotations

from typing import Any

from helpers import FIXTURES

RUNTIME = FIXTURES / "runtime"
KIB = 1024


def has_cuda() -> bool:
    """A CUDA GPU torch can use here (False where torch is missing)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def on_device(cpu: str, cuda: str) -> str:
    """What a test expects: `cpu` on a machine without CUDA, `cuda` on one with it."""
    return cuda if has_cuda() else cpu


def device_label(kind: str) -> str:
    """The device a fixture's verdict names under `--device auto`."""
    if kind == "loader":
        return on_device(cpu="cpu (simulated CUDA)", cuda="cuda:0")
    return on_device(cpu="cpu", cuda="cuda:0")


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
    ("tl004_buffer_in_place.py", {"kind": "module", "name": "KeyCenter"}, "host-only", 0, ""),
    ("tl004_buffer_in_place_fixed.py", {"kind": "module", "name": "KeyCenter"}, "not reproduced", 0, ""),
    ("tl004_item_fixed.py", {"kind": "loop", "name": "evaluate", "line": "total_loss +="}, "not reproduced", 0, ""),
    ("tl010_tbptt_leaky.py", {"kind": "loop", "name": "train", "line": "output, hidden = model("}, "confirmed", None, "autograd graph of local `loss`"),
    ("tl010_tbptt_fixed.py", {"kind": "loop", "name": "train", "line": "output, hidden = model("}, "not reproduced", 0, ""),
    ("tl011_retain_graph_total_loss.py", {"kind": "loop", "name": "train", "line": "loss.backward("}, "confirmed", None, "autograd graph of local `total_loss`"),
    ("tl011_retain_graph_rebound.py", {"kind": "loop", "name": "train", "line": "loss.backward("}, "not reproduced", 0, ""),
    ("tl011_fixed.py", {"kind": "loop", "name": "train", "line": "loss.backward("}, "not reproduced", 0, ""),
    ("pool_del_loop_variable.py", {"kind": "call", "name": "step"}, "confirmed", 128 * KIB, "TensorManager._tensors"),
    ("tl001_step_device_scores.py", {"kind": "call", "name": "step"}, "confirmed", 16 * KIB, "SCORES"),
    ("tl001_step_device_scores_fixed.py", {"kind": "call", "name": "step"}, "not reproduced", 0, ""),
    ("tl001_member_queue.py", {"kind": "module", "name": "Contrastive"}, "confirmed", 16 * KIB, "KeyQueue._buffers"),
    ("tl001_member_queue_fixed.py", {"kind": "module", "name": "Contrastive"}, "not reproduced", 0, ""),
    ("kept_exception.py", {"kind": "call", "name": "step"}, "confirmed", 128 * KIB, "traceback of RuntimeError kept in global `errors`"),
    ("tl012_default_list.py", {"kind": "call", "name": "step"}, "confirmed", 128 * KIB, "global `collect`"),
    ("tl012_default_none_fixed.py", {"kind": "call", "name": "step"}, "not reproduced", 0, ""),
    ("tl015_tensor_key_cache.py", {"kind": "module", "name": "NormTracker"}, "confirmed", 16 * KIB, "NormTracker.norms"),
    ("tl015_shape_key_fixed.py", {"kind": "module", "name": "NormTracker"}, "not reproduced", 0, ""),
    ("tl003_collate_cuda.py", {"kind": "loader", "name": "load_batches"}, "confirmed", None, ""),
    ("tl003_collate_fixed.py", {"kind": "loader", "name": "load_batches"}, "not reproduced", None, ""),
    ("tl016_probe_handles.py", {"kind": "module", "name": "ActivationProbe"}, "confirmed", 16 * KIB, "Linear._forward_hooks"),
    ("tl016_probe_handles_fixed.py", {"kind": "module", "name": "ActivationProbe"}, "not reproduced", 0, ""),
]  # fmt: skip


def planned_job(name: str, job: dict[str, Any], calls: int = 20, device: str = "auto") -> dict[str, Any]:
    """A job as the CLI plans it; a loop's line is given by the text on it."""
    job = {**job, "file": str(RUNTIME / name), "calls": calls, "warmup": 3, "device": device}
    if isinstance(job.get("line"), str):
        lines = (RUNTIME / name).read_text(encoding="utf-8").splitlines()
        job["line"] = max(i for i, line in enumerate(lines, 1) if job["line"] in line)  # not the docstring
    return job
