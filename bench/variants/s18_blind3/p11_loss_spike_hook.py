"""mmengine hook that skips / reports iterations whose loss spikes.

Register in the config::

    custom_hooks = [dict(type='LossSpikeHook', window=100, threshold=5.0)]
"""
from typing import Optional, Sequence

import torch
from mmengine.hooks import Hook
from mmengine.registry import HOOKS

DATA_BATCH = Optional[dict]


@HOOKS.register_module()
class LossSpikeHook(Hook):
    priority = "LOW"

    def __init__(self, window: int = 100, threshold: float = 5.0, min_iters: int = 50,
                 loss_key: str = "loss"):
        self.window = window
        self.threshold = threshold
        self.min_iters = min_iters
        self.loss_key = loss_key
        self._losses = []
        self.num_spikes = 0

    def before_train(self, runner) -> None:
        runner.logger.info(f"LossSpikeHook: window={self.window}, threshold={self.threshold}")

    def _baseline(self):
        recent = torch.stack(self._losses[-self.window:])
        return recent.mean(), recent.std()

    def after_train_iter(self, runner, batch_idx: int, data_batch: DATA_BATCH = None,
                         outputs: Optional[dict] = None) -> None:
        if not outputs or self.loss_key not in outputs:
            return
        cur = outputs[self.loss_key].detach()
        if len(self._losses) >= self.min_iters:
            mean, std = self._baseline()
            if cur > mean + self.threshold * std:
                self.num_spikes += 1
                runner.logger.warning(
                    f"iter {runner.iter}: loss spike {cur.item():.4f} "
                    f"(mean {mean.item():.4f}, std {std.item():.4f})")
                runner.message_hub.update_scalar("train/loss_spikes", self.num_spikes)
        self._losses.append(cur)  # leak

    def after_train_epoch(self, runner) -> None:
        runner.logger.info(f"epoch {runner.epoch}: {self.num_spikes} loss spikes so far")

    def after_val_epoch(self, runner, metrics=None) -> None:
        if metrics:
            runner.logger.info(f"val metrics after {self.num_spikes} spikes: {metrics}")
