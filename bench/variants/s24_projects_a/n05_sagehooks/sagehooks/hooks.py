"""Forward-hook utilities for grabbing intermediate node embeddings.

Each probed layer owns exactly one slot; every forward pass overwrites it, so
the capture holds at most one activation per layer.
"""
import logging
from typing import Dict, Iterable, List

import torch
import torch.nn as nn

log = logging.getLogger(__name__)


class FeatureCapture:
    def __init__(self, to_cpu: bool = True):
        self.to_cpu = to_cpu
        self.features: Dict[str, torch.Tensor] = {}
        self._handles: List[torch.utils.hooks.RemovableHandle] = []

    def _make_hook(self, name: str):
        def hook(module: nn.Module, inputs, output):
            out = output.detach()
            self.features[name] = out.cpu() if self.to_cpu else out
        return hook

    def attach(self, named_modules: Iterable) -> "FeatureCapture":
        for name, module in named_modules:
            self._handles.append(module.register_forward_hook(self._make_hook(name)))
        log.debug("attached %d hooks", len(self._handles))
        return self

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def clear(self) -> None:
        self.features.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def embedding_stats(features: Dict[str, torch.Tensor]) -> Dict[str, float]:
    stats = {}
    for name, h in features.items():
        stats[f"{name}/norm"] = h.norm(dim=1).mean().item()
        stats[f"{name}/rank"] = float(torch.linalg.matrix_rank(h.float()[:2048]))
    return stats
