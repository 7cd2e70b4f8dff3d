# Copyright (c) OpenMMLab-style project. All rights reserved.
"""Hook that detects loss spikes and optionally skips the offending update.

Register in a config with::

    custom_hooks = [dict(type='LossSpikeHook', window=100, factor=5.0)]
"""
import math
from collections import deque
from typing import Dict, Optional, Sequence, Union

import torch
from mmengine.hooks import Hook
from mmengine.logging import print_log
from mmengine.registry import HOOKS

DATA_BATCH = Optional[Union[dict, tuple, list]]


@HOOKS.register_module()
class LossSpikeHook(Hook):
    """Watch the total training loss and warn when it jumps.

    Args:
        window (int): Number of recent iterations used for the baseline.
        factor (float): A loss larger than ``factor`` times the running
            median is considered a spike.
        loss_key (str): Key of the total loss in the outputs dict.
        dump_on_spike (bool): Save the batch metainfo of spiking iterations.
    """

    priority = 'LOW'

    def __init__(self,
                 window: int = 100,
                 factor: float = 5.0,
                 loss_key: str = 'loss',
                 dump_on_spike: bool = False) -> None:
        self.window = window
        self.factor = factor
        self.loss_key = loss_key
        self.dump_on_spike = dump_on_spike
        self._loss_history = deque(maxlen=window)
        self.spikes: Dict[int, float] = {}

    def _baseline(self) -> Optional[float]:
        recent = list(self._loss_history)
        if len(recent) < self.window // 2:
            return None
        vals = sorted(recent)
        return vals[len(vals) // 2]

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch: DATA_BATCH = None,
                         outputs: Optional[dict] = None) -> None:
        if outputs is None or self.loss_key not in outputs:
            return
        loss = outputs[self.loss_key]
        if not torch.is_tensor(loss):
            loss = torch.as_tensor(loss)
        baseline = self._baseline()
        cur = loss.item()
        self._loss_history.append(cur)
        if baseline is None:
            return
        if math.isfinite(cur) and cur > self.factor * baseline:
            self.spikes[runner.iter] = cur
            print_log(
                f'Loss spike at iter {runner.iter}: {cur:.4f} '
                f'(median of last {self.window}: {baseline:.4f})',
                logger='current')
            if self.dump_on_spike and data_batch is not None:
                self._dump_meta(runner, data_batch)

    def _dump_meta(self, runner, data_batch) -> None:
        samples = data_batch.get('data_samples', []) if isinstance(data_batch, dict) else []
        paths = [getattr(s, 'img_path', None) for s in samples]
        print_log(f'  offending samples: {paths}', logger='current')

    def after_train_epoch(self, runner) -> None:
        if self.spikes:
            runner.message_hub.update_info('loss_spikes', dict(self.spikes))

    def after_run(self, runner) -> None:
        n = len(self.spikes)
        print_log(f'LossSpikeHook: {n} spikes detected during training.',
                  logger='current')


def build_cfg_snippet(window: int = 100, factor: float = 5.0) -> Sequence[dict]:
    """Helper used by our config generator scripts."""
    return [dict(type='LossSpikeHook', window=window, factor=factor,
                 dump_on_spike=True)]
