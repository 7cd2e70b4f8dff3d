"""Taking samples: ledger bytes and tensors, autograd nodes and, on CUDA, the allocator, after each call."""

from __future__ import annotations

import gc
import os
import time
import weakref
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch

from tensorlint.verify.attribute import attribute, largest_graph
from tensorlint.verify.decide import decide
from tensorlint.verify.ledger import StorageLedger
from tensorlint.verify.verdict import CONFIRMED, HOST_ONLY, Site, Verdict


class Probe:
    """The ledger plus the samples: `start()` after warm-up, `sample()` after each call, `finish()`."""

    def __init__(self, device: str = "auto", mode: str = "call", module: Any = None) -> None:
        self.ledger = StorageLedger()
        self.module = module  # the user's module: its globals are where holders are looked for first
        self.cuda = torch.cuda.is_available() and device != "cpu"
        self.device = device
        self.mode = mode
        self.live: list[int] = []
        self.tensors: list[int] = []
        self.nodes: list[int] = []
        self.allocator: list[int] = []
        self.allocated: list[int] = []
        self.started = 0.0
        self.warmup = 0
        self.old_roots: list[weakref.ref[Any]] = []
        self.history = False  # the CUDA allocator records where each block is allocated

    def __enter__(self) -> Probe:
        self.ledger.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.ledger.recording = False
        if self.history:
            _record_history(False)
        self.ledger.__exit__(*exc)
        gc.unfreeze()

    def start(self, warmup: int) -> None:
        """Called once warm-up is over: from here, new storages count."""
        self.warmup = warmup
        gc.collect()
        # Frozen objects are invisible to gc.get_objects(): keep the graph roots that exist now
        # (an accumulator made during warm-up and grown in place later, `total += loss`).
        self.old_roots = [weakref.ref(o) for o in gc.get_objects() if _is_tensor(o) and o.grad_fn is not None]
        gc.freeze()  # per-sample collections then only scan objects made since, ~0 s instead of 0.1 s
        self.ledger.recording = True
        self.history = self.cuda and _record_history(True)  # after warm-up: only the measured calls' blocks
        self.started = time.perf_counter()
        self.sample()

    def sample(self) -> None:
        gc.collect()
        if self.cuda:
            torch.cuda.synchronize()
            self.allocator.append(int(torch.cuda.memory_allocated()))
        self.live.append(self.ledger.live_bytes())
        self.tensors.append(self.ledger.live_tensors())
        self.nodes.append(_graph_nodes([r() for r in self.old_roots]))
        self.allocated.append(self.ledger.allocated)
        self.ledger.tick += 1

    def finish(self, frame: FrameType | None = None) -> Verdict:
        """Decide, and when it leaks, say who holds it. `frame`: the loop's frame, for its locals."""
        seconds = time.perf_counter() - self.started
        self.ledger.recording = False
        calls = len(self.live) - 1
        volume = (self.allocated[-1] - self.allocated[0]) / calls if calls > 0 else 0.0
        decision = decide(self.live, volume, self.nodes, self.tensors)
        device = self.ledger.device()
        cross: dict[str, Any] = {}
        if self.cuda and len(self.allocator) > 1:
            from tensorlint.verify.decide import theil_sen

            slope = theil_sen([float(v) for v in self.allocator])
            cross = {
                "cuda_memory_allocated_per_call": slope,
                "ledger_per_call": decision.slope,
                "agreement": (decision.slope / slope) if slope else None,
            }
        holders: tuple[Any, ...] = ()
        sites: tuple[Site, ...] = ()
        allocated_at = ""
        if decision.verdict == CONFIRMED and self.history:
            allocated_at = allocating_line(_snapshot(), getattr(self.module, "__file__", None))
        if decision.verdict == CONFIRMED or decision.node_slope >= 1:
            gc.unfreeze()  # get_referrers does not see frozen objects
            holders, sites = attribute(self.ledger, frame, self.module)
            if decision.verdict == HOST_ONLY:  # what the ledger kept does not grow; the graph does
                graph = largest_graph(frame, self.module)
                holders, sites = ((graph,) if graph is not None else ()), ()
        return Verdict(
            verdict=decision.verdict,
            reason=decision.reason,
            device=device,
            torch=torch.__version__,
            mode=self.mode,
            calls=calls,
            warmup=self.warmup,
            bytes_per_call=decision.slope,
            deltas=decision.deltas,
            delta_fraction=decision.delta_fraction,
            split_ratio=decision.split_ratio,
            r2=decision.r2,
            threshold=decision.threshold,
            allocated_per_call=volume,
            graph_nodes_per_call=decision.node_slope,
            tensors_per_call=decision.tensor_slope,
            basis=decision.basis,
            holders=holders,
            sites=sites,
            allocated_at=allocated_at,
            cross_check=cross,
            seconds=seconds,
        )


HISTORY_ENTRIES = 100_000  # alloc/free events kept; each live block keeps its own stack whatever this is


def _record_history(on: bool) -> bool:
    """Start (or stop) the CUDA caching allocator's record of Python stacks; False where this
    torch lacks the private API."""
    try:
        if on:
            torch.cuda.memory._record_memory_history(max_entries=HISTORY_ENTRIES, stacks="python")
        else:
            torch.cuda.memory._record_memory_history(enabled=None)
    except (AttributeError, RuntimeError, TypeError):
        return False
    return on


def _snapshot() -> dict[str, Any]:
    """The caching allocator's blocks, each with the stack that allocated it; {} where this torch
    has no `_snapshot`."""
    try:
        torch.cuda.synchronize()
        return dict(torch.cuda.memory._snapshot())
    except (AttributeError, RuntimeError, TypeError):
        return {}


def allocating_line(snapshot: dict[str, Any], user_file: str | None) -> str:
    """`FILE:LINE FUNCTION` of the line that allocated most of the blocks still allocated since
    recording began (the measured calls): the innermost frame of each in the user's file; ""
    when no block has one."""
    user = os.path.realpath(user_file) if user_file else None
    lines: dict[str, list[int]] = {}  # "file:line function" -> [blocks, bytes]
    for segment in snapshot.get("segments", ()):
        for block in segment.get("blocks", ()):
            if block.get("state") != "active_allocated":
                continue
            frames = block.get("frames", ())  # innermost first; none for blocks from before recording
            frame = next((f for f in frames if os.path.realpath(f.get("filename", "")) == user), None)
            if frame is not None:
                counted = lines.setdefault(f"{frame['filename']}:{frame['line']} {frame['name']}", [0, 0])
                counted[0] += 1
                counted[1] += int(block.get("size", 0))
    return max(lines, key=lambda line: lines[line], default="")


def _graph_nodes(old_roots: list[Any]) -> int:
    """Autograd nodes reachable from live tensors: those made since warm-up, and the older roots."""
    seen: dict[int, Any] = {}  # holds the node wrappers, so that their ids stay unique
    tensors = [o for o in gc.get_objects() if _is_tensor(o)] + [t for t in old_roots if t is not None]
    stack = [t.grad_fn for t in tensors if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(child for child, _ in node.next_functions)
    return len(seen)


def _is_tensor(obj: object) -> bool:
    # `type(...) is`, not isinstance: isinstance on every gc object trips lazy torch modules.
    return type(obj) is torch.Tensor or type(obj) is torch.nn.Parameter


def measure(
    step: Callable[[], Any], *, calls: int, warmup: int, device: str = "auto", mode: str = "call", module: Any = None
) -> Verdict:
    """Run `step` warmup + calls times; one sample after each measured call."""
    with Probe(device, mode, module) as probe:
        probe.ledger.recording = False
        for _ in range(warmup):
            step()
        probe.start(warmup)
        for _ in range(calls):
            step()
            probe.sample()
        return probe.finish()
