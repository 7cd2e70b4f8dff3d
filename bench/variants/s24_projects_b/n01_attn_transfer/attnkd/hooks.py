"""Forward hooks that expose intermediate activations by layer name.

Each tapped layer owns exactly one slot in :attr:`FeatureStore.features`; the
hook overwrites it on every forward pass, so the store always holds the
activations of the most recent batch only.
"""
from __future__ import annotations

import logging
from typing import Dict, Iterable, List

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class FeatureStore:
    def __init__(self, detach: bool = False):
        self.detach = detach
        self.features: Dict[str, torch.Tensor] = {}
        self._handles: List[torch.utils.hooks.RemovableHandle] = []

    def _make_hook(self, name: str):
        def hook(module: nn.Module, inputs, output):
            if isinstance(output, (tuple, list)):
                output = output[0]
            self.features[name] = output.detach() if self.detach else output
        return hook

    def attach(self, root: nn.Module, names: Iterable[str]) -> "FeatureStore":
        modules = dict(root.named_modules())
        for name in names:
            if name not in modules:
                raise KeyError(f"no sub-module named {name!r}")
            self._handles.append(modules[name].register_forward_hook(self._make_hook(name)))
        logger.debug("attached %d hooks", len(self._handles))
        return self

    def get(self, names: Iterable[str]) -> List[torch.Tensor]:
        return [self.features[n] for n in names]

    def clear(self) -> None:
        self.features.clear()

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()
        self.clear()


def attention_map(feat: torch.Tensor, p: int = 2) -> torch.Tensor:
    """Spatial attention: channel-wise mean of |A|^p, flattened and L2-normalised."""
    am = feat.abs().pow(p).mean(dim=1)
    return F.normalize(am.flatten(1), dim=1)


def at_loss(student: List[torch.Tensor], teacher: List[torch.Tensor]) -> torch.Tensor:
    loss = student[0].new_zeros(())
    for s, t in zip(student, teacher):
        if s.shape[-2:] != t.shape[-2:]:
            s = F.adaptive_avg_pool2d(s, t.shape[-2:])
        loss = loss + (attention_map(s) - attention_map(t)).pow(2).mean()
    return loss
