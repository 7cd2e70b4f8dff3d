# Copyright (c) OpenSeg contributors. All rights reserved.
"""Calibration metrics and the runner hook that feeds them.

The ECE state is three fixed-size per-bin accumulators (count, summed
confidence, summed accuracy), so its footprint does not depend on how many
pixels have been seen.  States are reset at the start of every epoch.
"""
import logging
from typing import Dict, Optional, Sequence

import torch
import torch.nn.functional as F

from openseg.registry import HOOKS, METRICS
from openseg.runner.hooks import Hook

logger = logging.getLogger("openseg")


@METRICS.register_module()
class ExpectedCalibrationError:
    def __init__(self, n_bins: int = 15, ignore_index: Optional[int] = None,
                 device: str = "cpu"):
        self.n_bins = n_bins
        self.ignore_index = ignore_index
        self.count = torch.zeros(n_bins, dtype=torch.float64, device=device)
        self.conf_sum = torch.zeros(n_bins, dtype=torch.float64, device=device)
        self.acc_sum = torch.zeros(n_bins, dtype=torch.float64, device=device)

    def reset(self) -> None:
        self.count.zero_()
        self.conf_sum.zero_()
        self.acc_sum.zero_()

    def _flatten(self, probs, target):
        if probs.dim() > 2:
            c = probs.shape[1]
            probs = probs.movedim(1, -1).reshape(-1, c)
            target = target.reshape(-1)
        if self.ignore_index is not None:
            keep = target != self.ignore_index
            probs, target = probs[keep], target[keep]
        return probs, target

    @torch.no_grad()
    def update(self, probs: torch.Tensor, target: torch.Tensor) -> None:
        probs, target = self._flatten(probs.detach(), target)
        conf, pred = probs.max(dim=-1)
        idx = (conf * self.n_bins).long().clamp_(max=self.n_bins - 1)
        idx = idx.to(self.count.device)
        self.count.scatter_add_(0, idx, torch.ones_like(idx, dtype=self.count.dtype))
        self.conf_sum.scatter_add_(0, idx, conf.to(self.conf_sum))
        self.acc_sum.scatter_add_(0, idx, pred.eq(target).to(self.acc_sum))

    def compute(self) -> float:
        total = self.count.sum()
        if total == 0:
            return float("nan")
        nz = self.count > 0
        gap = (self.conf_sum[nz] - self.acc_sum[nz]).abs()
        return float(gap.sum() / total)


@HOOKS.register_module()
class CalibrationHook(Hook):
    priority = "LOW"

    def __init__(self, interval: int = 50, n_bins: int = 15,
                 ignore_index: int = 255, temperature: float = 1.0):
        self.interval = interval
        self.temperature = temperature
        self.metric = ExpectedCalibrationError(n_bins=n_bins,
                                               ignore_index=ignore_index)

    def _probs(self, seg_logits: torch.Tensor, size: Sequence[int]) -> torch.Tensor:
        if seg_logits.shape[-2:] != tuple(size):
            seg_logits = F.interpolate(seg_logits, size=size, mode="bilinear",
                                       align_corners=False)
        return F.softmax(seg_logits / self.temperature, dim=1)

    def before_train_epoch(self, runner) -> None:
        self.metric.reset()

    def after_train_iter(self, runner, batch_idx: int,
                         data_batch: Optional[dict] = None,
                         outputs: Optional[Dict[str, torch.Tensor]] = None) -> None:
        if not outputs or "seg_logits" not in outputs:
            return
        gt = outputs["gt_sem_seg"]
        with torch.no_grad():
            probs = self._probs(outputs["seg_logits"].detach(), gt.shape[-2:])
        self.metric.update(probs, gt)
        if self.every_n_train_iters(runner, self.interval):
            ece = self.metric.compute()
            runner.message_hub.update_scalar("train/ece", ece)
            logger.info("iter %d: epoch ECE %.4f", runner.iter + 1, ece)

    def after_train_epoch(self, runner) -> None:
        logger.info("epoch %d training ECE: %.4f", runner.epoch, self.metric.compute())
