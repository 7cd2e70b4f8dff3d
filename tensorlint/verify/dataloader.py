"""TL003: what DataLoader workers ask of CUDA.

On a machine without CUDA the workers' requests are recorded (pid, op, line) by a
`TorchFunctionMode` and rerouted to the CPU, so the loop runs and the request is proven.
On a GPU they run for real, and the outcome is measured: the worker's error under fork
after the parent used CUDA, or the CUDA context memory each worker holds.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils.data import DataLoader

from tensorlint.verify.failure import summarise
from tensorlint.verify.ledger import SKIP_DIRS
from tensorlint.verify.verdict import CONFIRMED, INCONCLUSIVE, NOT_REPRODUCED, Verdict

BATCHES = 2  # enough for every worker of a small loader to have run the flagged code


class _Budget(BaseException):
    """Ends the user's loop after BATCHES batches (a BaseException: `except Exception` keeps out)."""


def _is_cuda(value: object) -> bool:
    if isinstance(value, torch.device):
        return bool(value.type == "cuda")
    return isinstance(value, str) and value.startswith("cuda")


class CudaRecorder(TorchFunctionMode):  # type: ignore[misc]
    """Logs `.cuda()`, `.to("cuda")` and `device="cuda"`; with `simulate`, runs them on the CPU."""

    def __init__(self, log: str, simulate: bool) -> None:
        super().__init__()
        self.log, self.simulate = log, simulate

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", str(func))
        wants = _is_cuda(kwargs.get("device")) or name == "cuda"
        if name == "to":
            wants = wants or any(_is_cuda(a) for a in args[1:])
        if wants:
            self._write(name)
            if self.simulate:
                if name == "cuda":
                    return args[0]
                if "device" in kwargs:
                    kwargs["device"] = "cpu"
                args = tuple("cpu" if _is_cuda(a) else a for a in args)
        return func(*args, **kwargs)

    def _write(self, op: str) -> None:
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename.startswith(SKIP_DIRS):
            frame = frame.f_back  # type: ignore[assignment]
        site = f"{frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}" if frame else "?"
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"pid": os.getpid(), "op": op, "site": site}) + "\n")


class WorkerHook:
    """Wraps `worker_init_fn`: installs the recorder in each worker. A module-level class, so
    that spawn and forkserver workers can unpickle it."""

    def __init__(self, original: Callable[[int], Any] | None, log: str, simulate: bool) -> None:
        self.original, self.log, self.simulate = original, log, simulate

    def __call__(self, worker_id: int) -> None:
        CudaRecorder(self.log, self.simulate).__enter__()  # for the worker's whole life
        if self.original is not None:
            self.original(worker_id)


def run_loader(entry: Callable[[], Any], simulate: bool) -> Verdict:
    with tempfile.TemporaryDirectory(prefix="tensorlint-workers-") as folder:
        log = os.path.join(folder, "cuda.jsonl")
        seen: dict[str, Any] = {"loaders": 0, "batches": 0}
        original_init, original_iter = DataLoader.__init__, DataLoader.__iter__

        def init(self: DataLoader[Any], *args: Any, **kwargs: Any) -> None:
            original_init(self, *args, **kwargs)
            if self.num_workers > 0:
                self.worker_init_fn = WorkerHook(self.worker_init_fn, log, simulate)

        def iterate(self: DataLoader[Any]) -> Any:
            seen["loaders"] += 1
            seen["start_method"] = _start_method(self)
            seen["free_before"] = _free()
            for batch in original_iter(self):
                seen["batches"] += 1
                yield batch
                if seen["batches"] >= BATCHES:
                    seen["workers_memory"] = _worker_memory(seen["free_before"], {r["pid"] for r in _read(log)})
                    raise _Budget

        DataLoader.__init__ = init  # type: ignore[method-assign]
        DataLoader.__iter__ = iterate  # type: ignore[assignment, method-assign]
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            returned = entry()
            if isinstance(returned, DataLoader):  # `make_loader()`: the loader it builds is iterated here
                for _ in returned:
                    pass
        except _Budget:
            pass
        except Exception as raised:
            error = raised
        finally:
            DataLoader.__init__ = original_init  # type: ignore[method-assign]
            DataLoader.__iter__ = original_iter  # type: ignore[method-assign]
        records = _read(log)
        return _verdict(records, seen, error, simulate, time.perf_counter() - started)


def _verdict(
    records: list[dict[str, Any]], seen: dict[str, Any], error: BaseException | None, simulate: bool, seconds: float
) -> Verdict:
    device = "cpu (simulated CUDA)" if simulate else "cuda:0"
    workers = _summarise(records)
    common: dict[str, Any] = {"device": device, "torch": torch.__version__, "mode": "dataloader", "seconds": seconds}
    method = seen.get("start_method", "?")
    if error is not None:
        failed = summarise(error, SKIP_DIRS)
        if "CUDA" in str(error) and "worker" in str(error).lower():
            return Verdict(
                CONFIRMED, reason=f"a DataLoader worker ({method}) failed: {failed}", workers=workers, **common
            )
        return Verdict(INCONCLUSIVE, reason=f"the entry raised {failed}", **common)
    if not seen["loaders"]:
        return Verdict(INCONCLUSIVE, reason="the entry iterated no DataLoader", **common)
    if not workers:
        reason = f"{seen['batches']} batches through workers ({method}); no worker asked for CUDA"
        return Verdict(NOT_REPRODUCED, reason=reason, **common)
    asked = _requests(workers)
    if simulate:
        outcome = (
            "raises 'Cannot re-initialize CUDA in forked subprocess' once the parent has used CUDA"
            if method == "fork"
            else "makes each worker create its own CUDA context (hundreds of MiB each: ~520 MiB on an H200)"
        )
        reason = f"DataLoader workers ({method}) asked for CUDA: {asked}. On a GPU this {outcome}"
        return Verdict(CONFIRMED, reason=reason, workers=workers, **common)
    memory = seen.get("workers_memory", {})
    pids = {w["pid"] for w in workers}
    reason = f"{len(pids)} DataLoader workers ({method}) used CUDA: {asked}"
    if memory.get("total"):
        reason += f"; +{memory['total'] / 2**20:.0f} MiB of GPU memory outside the allocator"
        if memory.get("per_worker"):
            reason += f" ({memory['per_worker'] / 2**20:.0f} MiB per worker)"
    return Verdict(CONFIRMED, reason=reason, workers=workers, cross_check=memory, **common)


def _requests(workers: tuple[dict[str, Any], ...]) -> str:
    """`workers 876, 877 called .to(cuda) at collate.py:14 collate`: one clause per op and line."""
    by_call: dict[tuple[str, str], list[int]] = {}
    for worker in workers:
        by_call.setdefault((worker["op"], worker["site"]), []).append(worker["pid"])
    clauses = []
    for (op, site), pids in list(by_call.items())[:3]:
        who = f"worker{'s' if len(pids) > 1 else ''} (pid {', '.join(str(p) for p in sorted(set(pids)))})"
        clauses.append(f"{who} called {_call(op)} at {_short(site)}")
    return "; ".join(clauses)


def _call(op: str) -> str:
    if op == "cuda":
        return ".cuda()"
    if op == "to":
        return '.to("cuda")'
    return f'{op}(device="cuda")'


def _summarise(records: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    counts: dict[tuple[int, str, str], int] = {}
    for record in records:
        if record["pid"] != os.getpid():  # only what ran in a worker
            key = (record["pid"], record["op"], record["site"])
            counts[key] = counts.get(key, 0) + 1
    return tuple({"pid": p, "op": o, "site": s, "count": n} for (p, o, s), n in counts.items())


def _short(site: str) -> str:
    from tensorlint.verify.verdict import short_site

    return short_site(site)


def _read(log: str) -> list[dict[str, Any]]:
    if not os.path.exists(log):
        return []
    with open(log, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _start_method(loader: DataLoader[Any]) -> str:
    context = loader.multiprocessing_context
    if context is None:
        import multiprocessing

        return str(multiprocessing.get_start_method())
    return str(context if isinstance(context, str) else context.get_start_method())


def _free() -> int | None:
    if not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return None
    return int(torch.cuda.mem_get_info()[0])


def _worker_memory(free_before: int | None, worker_pids: set[int]) -> dict[str, Any]:
    """GPU memory that the workers' CUDA contexts take: per process from NVML, else the drop in free memory."""
    if not torch.cuda.is_available():
        return {}
    time.sleep(1.0)  # let the workers finish creating their contexts
    result: dict[str, Any] = {}
    try:
        import pynvml  # type: ignore[import-not-found]  # nvidia-ml-py: optional

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)  # not current_device(): that would initialise CUDA here
        processes = {p.pid: p.usedGpuMemory for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)}
        workers = {pid: used for pid, used in processes.items() if pid in worker_pids and used}
        if workers:
            result = {"per_process": workers, "total": sum(workers.values()), "source": "nvml"}
            result["per_worker"] = result["total"] / len(workers)
    except Exception:  # no NVML, or it cannot see processes inside this VM
        pass
    if not result and torch.cuda.is_initialized():
        free_after = int(torch.cuda.mem_get_info()[0])
        if free_before is not None:
            result = {"total": max(0, free_before - free_after), "source": "mem_get_info"}
    return result
