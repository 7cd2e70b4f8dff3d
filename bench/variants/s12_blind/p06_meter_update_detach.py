"""Meters used by the segmentation training script."""
from __future__ import annotations

import torch


class AverageMeter:
    def __init__(self, name: str, fmt: str = ":.4f") -> None:
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self) -> None:
        self.val = 0.0
        self.sum = 0.0
        self.count = 0

    def update(self, val: float, n: int = 1) -> None:
        self.val = val
        self.sum += val * n
        self.count += n

    @property
    def avg(self) -> float:
        return self.sum / max(self.count, 1)


class IoUHistoryMeter:
    """Keeps per-batch IoU so we can plot its distribution at the end of training."""

    def __init__(self, num_classes: int, ignore_index: int = 255) -> None:
        self.num_classes = num_classes
        self.ignore_index = ignore_index
        self.history: list[torch.Tensor] = []

    def update(self, logits: torch.Tensor, target: torch.Tensor) -> None:
        pred = logits.argmax(1)
        valid = target != self.ignore_index
        ious = []
        for c in range(self.num_classes):
            p, t = (pred == c) & valid, (target == c) & valid
            inter = (p & t).sum()
            union = (p | t).sum().clamp_min(1)
            ious.append(inter / union)
        self.history.append(torch.stack(ious).detach())  # leak

    def percentile(self, q: float) -> torch.Tensor:
        return torch.quantile(torch.stack(self.history), q, dim=0)


def train_epoch(model, loader, opt, loss_meter: AverageMeter, iou_meter: IoUHistoryMeter) -> None:
    model.train()
    for img, mask in loader:
        img, mask = img.cuda(), mask.cuda()
        logits = model(img)
        loss = torch.nn.functional.cross_entropy(logits, mask, ignore_index=255)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss_meter.update(loss.item(), img.size(0))
        iou_meter.update(logits, mask)
