"""Custom ``TrainerCallback`` implementations.

HF's Trainer already reports ``grad_norm`` when clipping is on, but only the
post-clip global value. For the NER runs we also want the pre-clip mean/max over
each logging window to spot the loss spikes we kept seeing on WikiNER.
"""
from __future__ import annotations

import logging
import math
from typing import List, Optional

import torch
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

logger = logging.getLogger(__name__)


class GradNormCallback(TrainerCallback):
    """Track the global gradient norm right before each optimizer step."""

    def __init__(self, norm_type: float = 2.0):
        self.norm_type = norm_type
        self._norms: List[torch.Tensor] = []
        self._last_logged = 0

    def on_pre_optimizer_step(self, args: TrainingArguments, state: TrainerState,
                              control: TrainerControl, model=None, **kwargs):
        if model is None:
            return
        grads = [p.grad.detach() for p in model.parameters() if p.grad is not None]
        if not grads:
            return
        per_param = torch.stack([torch.linalg.vector_norm(g, self.norm_type) for g in grads])
        total = torch.linalg.vector_norm(per_param, self.norm_type)
        self._norms.append(total)  # leak

    def on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
               logs: Optional[dict] = None, **kwargs):
        if logs is None or len(self._norms) == self._last_logged:
            return
        window = torch.stack(self._norms[self._last_logged:])
        logs["grad_norm_preclip_mean"] = window.mean().item()
        logs["grad_norm_preclip_max"] = window.max().item()
        self._last_logged = len(self._norms)


class LossSpikeCallback(TrainerCallback):
    """Warn (and optionally stop) when the logged loss jumps far above its EMA."""

    def __init__(self, factor: float = 3.0, beta: float = 0.98, stop: bool = False):
        self.factor = factor
        self.beta = beta
        self.stop = stop
        self.ema: Optional[float] = None
        self.spikes = 0

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not logs or "loss" not in logs:
            return
        loss = float(logs["loss"])
        if math.isnan(loss):
            logger.error("NaN loss at step %d", state.global_step)
            control.should_training_stop = self.stop
            return
        if self.ema is not None and loss > self.factor * self.ema:
            self.spikes += 1
            logger.warning("loss spike at step %d: %.4f (ema %.4f)", state.global_step,
                           loss, self.ema)
            if self.stop and self.spikes >= 3:
                control.should_training_stop = True
        self.ema = loss if self.ema is None else self.beta * self.ema + (1 - self.beta) * loss

    def on_train_end(self, args, state, control, **kwargs):
        logger.info("training finished with %d loss spikes", self.spikes)
