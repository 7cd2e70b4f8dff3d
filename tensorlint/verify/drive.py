"""Inside the verifier's subprocess: import the user's file and drive a target under the probe.

Each job gets a fresh copy of the user's module (its globals start anew), a fixed seed, and
leaves nothing behind that the next job of the same process would measure: the probe, the
trace function and the DataLoader patches are undone, and garbage is collected.

Four ways to drive: `module` (build an nn.Module without arguments, feed inferred inputs),
`call` (a function without required arguments, once per sample), `loop` (one call of a
function, one sample per execution of the flagged line: a leak across loop iterations), and
`loader` (a function that iterates a DataLoader: TL003, see dataloader.py).
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import torch
from torch import nn
from torch.utils._pytree import tree_flatten

from tensorlint.verify import inputs
from tensorlint.verify.sampler import Probe, measure
from tensorlint.verify.verdict import INCONCLUSIVE, Verdict


class _Enough(BaseException):
    """Raised into the user's loop once enough iterations were sampled; not an Exception, so
    that the user's `except Exception` does not swallow it."""


def run(job: dict[str, Any]) -> Verdict:
    """Drive one job; isolated from the jobs run before and after it in the same process."""
    torch.set_num_threads(1)  # OpenMP spin-waits badly on small shared CI machines
    torch.manual_seed(0)
    try:
        return _run(job)
    finally:
        gc.collect()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()
            torch.cuda.empty_cache()


def _run(job: dict[str, Any]) -> Verdict:
    device = job.get("device", "auto")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    calls, warmup = int(job.get("calls", 20)), int(job.get("warmup", 3))
    if job["kind"] == "script":
        from tensorlint.verify.script import run_script

        return run_script(job)
    try:
        module, target = _load(job)
        kind = job["kind"]
        if kind == "module":
            return _module(target, job, device, calls, warmup, module)
        _require_no_arguments(target)
        if kind == "call":
            return measure(target, calls=calls, warmup=warmup, device=device, mode="call", module=module)
        if kind == "loop":
            return _loop(target, job["file"], int(job["line"]), calls, warmup, device, module)
        if kind == "loader":
            from tensorlint.verify.dataloader import run_loader

            return run_loader(target, simulate=not torch.cuda.is_available() or device == "cpu")
        return _inconclusive(f"unknown job kind {kind!r}")
    except inputs.NeedsSpec as error:
        return _inconclusive(str(error))


def _inconclusive(reason: str) -> Verdict:
    return Verdict(INCONCLUSIVE, reason=reason, device="", torch=torch.__version__)


def _load(job: dict[str, Any]) -> tuple[ModuleType, Any]:
    module: ModuleType
    if "file" in job:
        path = Path(job["file"]).resolve()
        # Its real name, so that spawn-started workers can import what they unpickle.
        if str(path.parent) not in sys.path:
            sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise inputs.NeedsSpec(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(job["module"])
    target: Any = module
    for part in job["name"].split("."):
        if not hasattr(target, part):
            raise inputs.NeedsSpec(f"needs a spec: {job['name']!r} not found in {module.__name__}")
        target = getattr(target, part)
    return module, target


def _require_no_arguments(target: Any) -> None:
    if not callable(target):
        raise inputs.NeedsSpec(f"needs a spec: {target!r} is not callable")
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return
    required = [
        p.name
        for p in signature.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    if required:
        raise inputs.NeedsSpec(
            f"needs a spec: {getattr(target, '__qualname__', target)}() requires {', '.join(required)}; "
            "name an entry without arguments (--entry)"
        )


def _module(cls: Any, job: dict[str, Any], device: str, calls: int, warmup: int, module: ModuleType) -> Verdict:
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        raise inputs.NeedsSpec(f"needs a spec: {job['name']} is not an nn.Module; name an entry (--entry)")
    try:
        model = cls(**job.get("init", {}))
    except TypeError as error:
        raise inputs.NeedsSpec(
            f"needs a spec: {job['name']}() needs constructor arguments ({error}); give `init`"
        ) from error
    model.to(device)
    args = inputs.build(model, job.get("inputs"), device)
    mode = job.get("mode", "train")

    def step() -> None:
        out = model(*args)
        if mode == "train":
            tensors = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.is_floating_point()]
            if tensors and tensors[0].requires_grad:
                tensors[0].float().sum().backward()
            model.zero_grad(set_to_none=True)

    return measure(step, calls=calls, warmup=warmup, device=device, mode=mode, module=module)


def _loop(
    function: Callable[[], Any], file: str, line: int, calls: int, warmup: int, device: str, module: ModuleType
) -> Verdict:
    """Sample each time the flagged line is about to run: one sample per loop iteration."""
    filename = str(Path(file).resolve())
    probe = Probe(device, mode="loop iteration", module=module)
    state: dict[str, Any] = {"hits": 0, "verdict": None}

    def local(frame: FrameType, event: str, arg: object) -> Any:
        if event == "line" and frame.f_lineno == line:
            state["hits"] += 1
            hits = state["hits"]
            if hits == warmup + 1:
                probe.start(warmup)
            elif hits > warmup + 1:
                probe.sample()
            if hits == warmup + 1 + calls:
                state["verdict"] = probe.finish(frame)
                raise _Enough
        return local

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        return local if frame.f_code.co_filename == filename else None

    with probe:
        probe.ledger.recording = False
        sys.settrace(trace)
        try:
            function()
        except _Enough:
            pass
        finally:
            sys.settrace(None)
        if state["verdict"] is None:
            if state["hits"] < warmup + 4:
                return _inconclusive(f"the flagged line ran {state['hits']} times; it needs {warmup + 4}")
            return probe.finish()
        verdict: Verdict = state["verdict"]
        return verdict
