"""Trainer callbacks for monitoring fine-tuning runs."""
from __future__ import annotations

import json
import logging
import os
from collections import deque
from typing import Deque, Optional

import torch
from transformers import TrainerCallback

logger = logging.getLogger(__name__)


class GradNormCallback(TrainerCallback):
    """Report the pre-clipping gradient norm averaged over the last ``window`` steps."""

    def __init__(self, window: int = 50, norm_type: float = 2.0):
        self.norm_type = norm_type
        self._norms: Deque[float] = deque(maxlen=window)

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        if model is None:
            return
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        if not grads:
            return
        with torch.no_grad():
            per_param = torch.stack([torch.linalg.vector_norm(g, self.norm_type) for g in grads])
            total = torch.linalg.vector_norm(per_param, self.norm_type)
        self._norms.append(total.item())

    def on_log(self, args, state, control, logs: Optional[dict] = None, **kwargs):
        if logs is None or not self._norms:
            return
        logs["grad_norm_preclip_mean"] = sum(self._norms) / len(self._norms)
        logs["grad_norm_preclip_max"] = max(self._norms)


class JsonlMetricsCallback(TrainerCallback):
    """Append every ``logs`` dict (floats only) to ``<output_dir>/metrics.jsonl``."""

    def __init__(self, filename: str = "metrics.jsonl"):
        self.filename = filename
        self._fh = None

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            os.makedirs(args.output_dir, exist_ok=True)
            self._fh = open(os.path.join(args.output_dir, self.filename), "a")

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self._fh is None or not logs:
            return
        record = {"step": state.global_step, "epoch": state.epoch}
        record.update({k: float(v) for k, v in logs.items() if isinstance(v, (int, float))})
        self._fh.write(json.dumps(record) + "\n")
        self._fh.flush()

    def on_train_end(self, args, state, control, **kwargs):
        if self._fh is not None:
            self._fh.close()
            self._fh = None
            logger.info("metrics written to %s", self.filename)
