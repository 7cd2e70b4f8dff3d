"""Segmentation losses."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


def dice_loss(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = 255,
              eps: float = 1.0) -> torch.Tensor:
    """Soft multi-class Dice loss computed on softmax probabilities."""
    num_classes = logits.shape[1]
    valid = (target != ignore_index).unsqueeze(1)
    target = target.clone()
    target[target == ignore_index] = 0
    one_hot = F.one_hot(target, num_classes).permute(0, 3, 1, 2).float()
    probs = logits.softmax(dim=1) * valid
    one_hot = one_hot * valid
    dims = (0, 2, 3)
    inter = (probs * one_hot).sum(dims)
    card = probs.sum(dims) + one_hot.sum(dims)
    return 1.0 - ((2 * inter + eps) / (card + eps)).mean()


class DiceCELoss(nn.Module):
    """Weighted combination of cross-entropy and Dice."""

    def __init__(self, ce_weight: float = 1.0, dice_weight: float = 0.5,
                 ignore_index: int = 255, label_smoothing: float = 0.0):
        super().__init__()
        self.ce_weight = ce_weight
        self.dice_weight = dice_weight
        self.ignore_index = ignore_index
        self.ce = nn.CrossEntropyLoss(ignore_index=ignore_index,
                                      label_smoothing=label_smoothing)

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        loss = self.ce_weight * self.ce(logits, target)
        if self.dice_weight > 0:
            loss = loss + self.dice_weight * dice_loss(logits, target, self.ignore_index)
        return loss

    def extra_repr(self) -> str:
        return f"ce_weight={self.ce_weight}, dice_weight={self.dice_weight}"
