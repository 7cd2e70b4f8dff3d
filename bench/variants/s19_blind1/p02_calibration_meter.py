# Copyright (c) OpenSeg contributors. All rights reserved.
"""Calibration metrics and the runner hook that feeds them.

``ExpectedCalibrationError`` follows Guo et al. (2017): predictions are binned
by confidence and the gap between confidence and accuracy is averaged with
bin weights.  ``CalibrationHook`` plugs it into the runner so that training
logs carry a cumulative ECE next to the loss.
"""
import logging
from typing import Dict, List, Optional, Sequence

import torch
import torch.nn.functional as F

from openseg.registry import HOOKS, METRICS
from openseg.runner.hooks import Hook

logger = logging.getLogger("openseg")


@METRICS.register_module()
class ExpectedCalibrationError:
    """Top-label ECE over everything seen since construction.

    Args:
        n_bins: number of equal-width confidence bins.
        ignore_index: label id to skip (e.g. 255 for void pixels).
    """

    def __init__(self, n_bins: int = 15, ignore_index: Optional[int] = None):
        self.n_bins = n_bins
        self.ignore_index = ignore_index
        # each entry: (N, 2) tensor of [confidence, is_correct]
        self.samples: List[torch.Tensor] = []

    def _flatten(self, probs, target):
        if probs.dim() > 2:
            # (N, C, H, W) -> (N*H*W, C)
            c = probs.shape[1]
            probs = probs.movedim(1, -1).reshape(-1, c)
            target = target.reshape(-1)
        if self.ignore_index is not None:
            keep = target != self.ignore_index
            probs, target = probs[keep], target[keep]
        return probs, target

    def update(self, probs: torch.Tensor, target: torch.Tensor) -> None:
        probs, target = self._flatten(probs, target)
        conf, pred = probs.max(dim=-1)
        correct = pred.eq(target).to(conf.dtype)
        self.samples.append(torch.stack((conf, correct), dim=-1))  # leak

    def compute(self) -> float:
        if not self.samples:
            return float("nan")
        stacked = torch.cat(self.samples).float()
        conf, acc = stacked.unbind(dim=-1)
        edges = torch.linspace(0, 1, self.n_bins + 1, device=conf.device)
        ece = conf.new_zeros(())
        for lo, hi in zip(edges[:-1], edges[1:]):
            in_bin = (conf > lo) & (conf <= hi)
            frac = in_bin.float().mean()
            if frac > 0:
                gap = (conf[in_bin].mean() - acc[in_bin].mean()).abs()
                ece = ece + gap * frac
        return float(ece)


@HOOKS.register_module()
class CalibrationHook(Hook):
    """Tracks calibration of the segmentation head during training.

    The hook reads ``seg_logits`` and ``gt_sem_seg`` from the model outputs
    after each train iteration, and reports the cumulative ECE every
    ``interval`` iterations.
    """

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

    def after_train_iter(self, runner, batch_idx: int,
                         data_batch: Optional[dict] = None,
                         outputs: Optional[Dict[str, torch.Tensor]] = None) -> None:
        if not outputs or "seg_logits" not in outputs:
            return
        gt = outputs["gt_sem_seg"]
        probs = self._probs(outputs["seg_logits"], gt.shape[-2:])
        self.metric.update(probs, gt)
        if self.every_n_train_iters(runner, self.interval):
            ece = self.metric.compute()
            runner.message_hub.update_scalar("train/ece", ece)
            logger.info("iter %d: cumulative ECE %.4f", runner.iter + 1, ece)

    def after_train(self, runner) -> None:
        ece = self.metric.compute()
        logger.info("final training ECE: %.4f", ece)
