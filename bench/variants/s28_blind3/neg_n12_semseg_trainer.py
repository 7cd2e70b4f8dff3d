"""Semantic-segmentation trainer on top of detectron2's SimpleTrainer.

Adds AMP, gradient clipping and a smoothed per-term loss that the
divergence guard and the console writer read.
"""
import logging
import time
from typing import Dict

import torch
from detectron2.engine import SimpleTrainer, hooks
from detectron2.utils.events import get_event_storage

logger = logging.getLogger("detectron2.semseg")


class SegTrainer(SimpleTrainer):
    def __init__(self, model, data_loader, optimizer, cfg):
        super().__init__(model, data_loader, optimizer)
        self.cfg = cfg
        self.grad_scaler = torch.cuda.amp.GradScaler(enabled=cfg.SOLVER.AMP.ENABLED)
        self.smoothing = cfg.SOLVER.get("LOSS_SMOOTHING", 0.98)
        self.smoothed_losses: Dict[str, torch.Tensor] = {}

    def _smooth(self, loss_dict):
        beta = self.smoothing
        for name, value in loss_dict.items():
            value = value.detach().float()
            prev = self.smoothed_losses.get(name, value)
            self.smoothed_losses[name] = beta * prev + (1 - beta) * value

    def run_step(self):
        assert self.model.training, "[SegTrainer] model was changed to eval mode!"
        start = time.perf_counter()
        data = next(self._data_loader_iter)
        data_time = time.perf_counter() - start

        with torch.autocast("cuda", enabled=self.cfg.SOLVER.AMP.ENABLED):
            loss_dict = self.model(data)
            losses = sum(loss_dict.values())

        self.optimizer.zero_grad(set_to_none=True)
        self.grad_scaler.scale(losses).backward()
        if self.cfg.SOLVER.CLIP_GRADIENTS.ENABLED:
            self.grad_scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(),
                                           self.cfg.SOLVER.CLIP_GRADIENTS.CLIP_VALUE)
        self._smooth(loss_dict)
        self._write_metrics(loss_dict, data_time)
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()


class DivergenceGuard(hooks.HookBase):
    """Stops training when the smoothed total loss explodes or becomes NaN."""

    def __init__(self, factor: float = 10.0, warmup: int = 500, period: int = 20):
        self.factor = factor
        self.warmup = warmup
        self.period = period
        self._baseline = None

    def after_step(self):
        it = self.trainer.iter
        if it < self.warmup or it % self.period:
            return
        smoothed = self.trainer.smoothed_losses
        if not smoothed:
            return
        total = sum(float(v) for v in smoothed.values())
        storage = get_event_storage()
        storage.put_scalar("loss_smoothed", total, smoothing_hint=False)
        if self._baseline is None:
            self._baseline = total
        if not total == total or total > self.factor * self._baseline:
            logger.error("loss diverged at iter %d: %.4f (baseline %.4f)", it, total, self._baseline)
            raise FloatingPointError(f"Loss diverged at iteration {it}")
        self._baseline = min(self._baseline, total)


def build_trainer(cfg, model, data_loader, optimizer, checkpointer):
    trainer = SegTrainer(model, data_loader, optimizer, cfg)
    trainer.register_hooks([
        hooks.IterationTimer(),
        hooks.LRScheduler(),
        DivergenceGuard(factor=cfg.SOLVER.get("DIVERGENCE_FACTOR", 10.0)),
        hooks.PeriodicCheckpointer(checkpointer, cfg.SOLVER.CHECKPOINT_PERIOD),
    ])
    logger.info("built SegTrainer with AMP=%s", cfg.SOLVER.AMP.ENABLED)
    return trainer
