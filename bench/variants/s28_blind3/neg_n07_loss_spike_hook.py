# Copyright (c) OpenMMLab-style project. All rights reserved.
"""Hook that watches the detector loss for spikes and optionally rolls back.

Large-scale DETR-like training occasionally diverges after a bad batch; this
hook compares each iteration's loss against a running median and, when the
ratio exceeds ``threshold`` for ``patience`` iterations, reloads the last
good checkpoint and halves the learning rate.
"""
import statistics
from collections import deque
from typing import Optional, Sequence

import torch
from mmengine.dist import is_main_process
from mmengine.hooks import Hook
from mmengine.logging import print_log
from mmdet.registry import HOOKS

DATA_BATCH = Optional[Sequence[dict]]


@HOOKS.register_module()
class LossSpikeHook(Hook):
    priority = 'BELOW_NORMAL'

    def __init__(self,
                 window: int = 200,
                 threshold: float = 4.0,
                 patience: int = 3,
                 warmup_iters: int = 1000,
                 rollback: bool = True,
                 loss_key: str = 'loss') -> None:
        self.window = window
        self.threshold = threshold
        self.patience = patience
        self.warmup_iters = warmup_iters
        self.rollback = rollback
        self.loss_key = loss_key
        self._records = deque(maxlen=window)
        self._strikes = 0
        self._last_good_ckpt = None

    def _median(self) -> float:
        recent = [v for _, v in self._records]
        return statistics.median(recent) if recent else float('inf')

    def _push(self, it: int, value) -> None:
        self._records.append((it, float(value)))

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch: DATA_BATCH = None,
                         outputs: Optional[dict] = None) -> None:
        if not outputs or self.loss_key not in outputs:
            return
        cur = outputs[self.loss_key]
        if runner.iter < self.warmup_iters:
            self._push(runner.iter, cur)
            return

        median = self._median()
        ratio = float(cur) / max(median, 1e-12)
        self._push(runner.iter, cur)
        if not torch.isfinite(torch.as_tensor(float(cur))) or ratio > self.threshold:
            self._strikes += 1
            print_log(f'loss spike at iter {runner.iter}: {float(cur):.4f} '
                      f'(median {median:.4f}, strike {self._strikes})',
                      logger='current', level='WARNING')
        else:
            self._strikes = 0

        if self._strikes >= self.patience and self.rollback:
            self._roll_back(runner)

    def after_save_checkpoint(self, runner, checkpoint: dict) -> None:
        if self._strikes == 0:
            self._last_good_ckpt = runner.work_dir + f'/iter_{runner.iter}.pth'

    def _roll_back(self, runner) -> None:
        if self._last_good_ckpt is None:
            print_log('no checkpoint to roll back to', logger='current', level='ERROR')
            return
        runner.load_checkpoint(self._last_good_ckpt, map_location='cpu')
        for group in runner.optim_wrapper.optimizer.param_groups:
            group['lr'] *= 0.5
        self._strikes = 0
        if is_main_process():
            print_log(f'rolled back to {self._last_good_ckpt}, lr halved',
                      logger='current', level='WARNING')
