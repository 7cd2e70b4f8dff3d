"""Lightweight per-layer timing / activation-size profiler.

Attach once, leave it on for a run, then call ``summary()`` at any time.
"""
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List

import torch
from torch import nn


@dataclass
class LayerCall:
    name: str
    elapsed_ms: float
    output: Any = None

    @property
    def nbytes(self) -> int:
        out = self.output
        if isinstance(out, torch.Tensor):
            return out.numel() * out.element_size()
        if isinstance(out, (tuple, list)):
            return sum(o.numel() * o.element_size() for o in out if isinstance(o, torch.Tensor))
        return 0


@dataclass
class ProfileState:
    calls: List[LayerCall] = field(default_factory=list)
    starts: Dict[str, float] = field(default_factory=dict)


class LayerProfiler:
    def __init__(self, model: nn.Module, leaf_only: bool = True, sync_cuda: bool = True):
        self.model = model
        self.sync_cuda = sync_cuda and torch.cuda.is_available()
        self.state = ProfileState()
        self._handles = []
        for name, mod in model.named_modules():
            if leaf_only and len(list(mod.children())) > 0:
                continue
            self._handles.append(mod.register_forward_pre_hook(self._pre(name)))
            self._handles.append(mod.register_forward_hook(self._post(name)))

    def _now(self):
        if self.sync_cuda:
            torch.cuda.synchronize()
        return time.perf_counter()

    def _pre(self, name):
        def fn(mod, inp):
            self.state.starts[name] = self._now()
        return fn

    def _post(self, name):
        def fn(mod, inp, out):
            dt = (self._now() - self.state.starts.pop(name, self._now())) * 1e3
            self.state.calls.append(LayerCall(name, dt, out))  # leak
        return fn

    def summary(self, top: int = 20) -> str:
        agg: Dict[str, List[float]] = {}
        size: Dict[str, int] = {}
        for c in self.state.calls:
            agg.setdefault(c.name, []).append(c.elapsed_ms)
            size[c.name] = max(size.get(c.name, 0), c.nbytes)
        rows = sorted(agg.items(), key=lambda kv: -sum(kv[1]))[:top]
        lines = [f"{'layer':40s} {'calls':>6s} {'mean ms':>9s} {'act MB':>8s}"]
        for name, ts in rows:
            lines.append(f"{name:40s} {len(ts):6d} {sum(ts)/len(ts):9.3f} {size[name]/2**20:8.2f}")
        return "\n".join(lines)

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []
