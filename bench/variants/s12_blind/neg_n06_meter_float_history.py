"""Meters used by the segmentation training script."""
from __future__ import annotations

import statistics

import torch


class IoUHistoryMeter:
    """Keeps per-batch mIoU (as python floats) to plot its distribution later."""

    def __init__(self, num_classes: int, ignore_index: int = 255) -> None:
        self.num_classes = num_classes
        self.ignore_index = ignore_index
        self.history: list[float] = []

    @torch.no_grad()
    def update(self, logits: torch.Tensor, target: torch.Tensor) -> None:
        pred = logits.argmax(1)
        valid = target != self.ignore_index
        ious = []
        for c in range(self.num_classes):
            p, t = (pred == c) & valid, (target == c) & valid
            union = (p | t).sum()
            if union > 0:
                ious.append((p & t).sum() / union)
        if ious:
            self.history.append(torch.stack(ious).mean().item())

    def median(self) -> float:
        return statistics.median(self.history) if self.history else float("nan")


class AverageMeter:
    def __init__(self) -> None:
        self.sum, self.count = 0.0, 0

    def update(self, val: float, n: int = 1) -> None:
        self.sum += val * n
        self.count += n

    @property
    def avg(self) -> float:
        return self.sum / max(self.count, 1)


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
