"""Intermediate-feature extraction for arbitrary backbones.

``FeatureExtractor`` wraps a backbone and exposes the outputs of a set of named
sub-modules, e.g. for perceptual / feature-matching losses or FPN necks::

    extractor = FeatureExtractor(vgg.features, return_nodes={"3": "relu1_2", "8": "relu2_2"})
    feats = extractor(images)      # {"relu1_2": Tensor, "relu2_2": Tensor}

Hooks are installed once at construction time and removed by :meth:`close`.
Captured outputs are handed to the caller and dropped from the extractor, so
nothing from one forward pass survives into the next.
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.hooks import RemovableHandle


def _resolve(module: nn.Module, dotted: str) -> nn.Module:
    for part in dotted.split("."):
        module = getattr(module, part) if not part.isdigit() else module[int(part)]
    return module


class _FeatureBuffer:
    """Holds the features of the forward pass currently in flight."""

    def __init__(self, names: Sequence[str]) -> None:
        self._names = list(names)
        self._store: Dict[str, torch.Tensor] = {}

    def record(self, name: str, value: torch.Tensor) -> None:
        self._store[name] = value

    def pop_all(self) -> Dict[str, torch.Tensor]:
        missing = [n for n in self._names if n not in self._store]
        if missing:
            self._store.clear()
            raise RuntimeError(f"features {missing} were not produced by the forward pass")
        out, self._store = self._store, {}
        return out


class FeatureExtractor(nn.Module):
    def __init__(self, backbone: nn.Module, return_nodes: Mapping[str, str]) -> None:
        super().__init__()
        self.backbone = backbone
        self.return_nodes = dict(return_nodes)
        self._buffer = _FeatureBuffer(list(self.return_nodes.values()))
        self._handles: List[RemovableHandle] = []
        for path, public in self.return_nodes.items():
            target = _resolve(backbone, path)
            self._handles.append(target.register_forward_hook(self._make_hook(public)))

    def _make_hook(self, public_name: str):
        def _hook(module: nn.Module, args, output):
            if isinstance(output, (tuple, list)):
                output = output[0]
            self._buffer.record(public_name, output)
        return _hook

    def forward(self, x: torch.Tensor) -> Dict[str, torch.Tensor]:
        self.backbone(x)
        return self._buffer.pop_all()

    def close(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def __enter__(self) -> "FeatureExtractor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class PerceptualLoss(nn.Module):
    """L1 distance between backbone features of prediction and target."""

    def __init__(self, backbone: nn.Module, layers: Mapping[str, str],
                 weights: Optional[Mapping[str, float]] = None) -> None:
        super().__init__()
        for p in backbone.parameters():
            p.requires_grad_(False)
        self.extractor = FeatureExtractor(backbone.eval(), layers)
        self.weights = dict(weights or {name: 1.0 for name in layers.values()})

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        pred_feats = self.extractor(pred)
        with torch.no_grad():
            tgt_feats = self.extractor(target)
        total = pred.new_zeros(())
        for name, w in self.weights.items():
            total = total + w * F.l1_loss(pred_feats[name], tgt_feats[name])
        return total


def _tiny_backbone() -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1, stride=2), nn.ReLU(),
    )


if __name__ == "__main__":
    generator = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 3, 3, padding=1))
    criterion = PerceptualLoss(_tiny_backbone(), {"1": "relu1", "3": "relu2", "5": "relu3"})
    opt = torch.optim.Adam(generator.parameters(), lr=2e-4)
    for it in range(2000):
        noisy = torch.rand(8, 3, 64, 64)
        clean = noisy.clamp(0.1, 0.9)
        restoration_err = criterion(generator(noisy), clean)
        opt.zero_grad(set_to_none=True)
        restoration_err.backward()
        opt.step()
        if it % 200 == 0:
            print(it, restoration_err.item())
