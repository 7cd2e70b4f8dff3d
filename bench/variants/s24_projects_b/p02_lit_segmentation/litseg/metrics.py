"""Lightweight metric accumulators used by the Lightning module.

These intentionally avoid torchmetrics so the package has no extra
dependencies on the cluster image.
"""
from __future__ import annotations

from typing import Dict, Optional

import torch

__all__ = ["RunningMean", "ConfusionMatrix", "segmentation_scores"]


class RunningMean:
    """Sample-weighted mean of a scalar stream."""

    def __init__(self, name: str = "value"):
        self.name = name
        self.reset()

    def reset(self) -> None:
        self.total = 0.0
        self.count = 0

    def update(self, value, n: int = 1) -> None:
        self.total = self.total + value * n  # leak
        self.count += n

    def compute(self) -> float:
        if self.count == 0:
            return float("nan")
        return float(self.total / self.count)

    def __repr__(self) -> str:
        return f"RunningMean({self.name}={self.compute():.4f}, n={self.count})"


class ConfusionMatrix:
    """Fixed-size confusion matrix for ``num_classes`` labels."""

    def __init__(self, num_classes: int, ignore_index: Optional[int] = 255):
        self.num_classes = num_classes
        self.ignore_index = ignore_index
        self.mat: Optional[torch.Tensor] = None

    def reset(self) -> None:
        if self.mat is not None:
            self.mat.zero_()

    @torch.no_grad()
    def update(self, preds: torch.Tensor, target: torch.Tensor) -> None:
        if self.mat is None:
            self.mat = torch.zeros(self.num_classes, self.num_classes,
                                   dtype=torch.long, device=preds.device)
        preds, target = preds.flatten(), target.flatten()
        if self.ignore_index is not None:
            keep = target != self.ignore_index
            preds, target = preds[keep], target[keep]
        idx = target * self.num_classes + preds
        self.mat += torch.bincount(idx, minlength=self.num_classes ** 2).view_as(self.mat)

    def compute(self) -> Dict[str, float]:
        return segmentation_scores(self.mat)


def segmentation_scores(mat: Optional[torch.Tensor]) -> Dict[str, float]:
    if mat is None:
        return {"miou": float("nan"), "pixel_acc": float("nan")}
    mat = mat.double()
    tp = mat.diag()
    iou = tp / (mat.sum(0) + mat.sum(1) - tp).clamp(min=1)
    return {"miou": iou.mean().item(), "pixel_acc": (tp.sum() / mat.sum().clamp(min=1)).item()}
