"""Minimal experiment logger writing to TensorBoard and a JSONL file.

Scalars are written immediately.  Expensive diagnostics can be registered with
:meth:`ExperimentLogger.defer`; they are evaluated lazily when the logger is
closed so that the training loop never blocks on a device sync.
"""
import json
import logging
import os
import time
from typing import Callable, List, Tuple

from torch.utils.tensorboard import SummaryWriter

log = logging.getLogger(__name__)


class ExperimentLogger:
    def __init__(self, log_dir: str, run_name: str = None, use_tb: bool = True):
        self.run_name = run_name or time.strftime("%Y%m%d-%H%M%S")
        self.log_dir = os.path.join(log_dir, self.run_name)
        os.makedirs(self.log_dir, exist_ok=True)
        self.writer = SummaryWriter(self.log_dir) if use_tb else None
        self._jsonl = open(os.path.join(self.log_dir, "metrics.jsonl"), "a")
        self._deferred: List[Tuple[int, str, Callable]] = []
        self.step = 0

    def set_step(self, step: int) -> None:
        self.step = step

    def scalar(self, tag: str, value: float, step: int = None) -> None:
        step = self.step if step is None else step
        value = float(value)
        if self.writer is not None:
            self.writer.add_scalar(tag, value, step)
        self._jsonl.write(json.dumps({"step": step, tag: value}) + "\n")

    def scalars(self, values: dict, prefix: str = "") -> None:
        for k, v in values.items():
            self.scalar(f"{prefix}{k}", v)

    def defer(self, tag: str, fn: Callable[[], float]) -> None:
        """Register ``fn`` to be evaluated and logged at the current step later."""
        self._deferred.append((self.step, tag, fn))  # leak

    def hparams(self, hp: dict) -> None:
        with open(os.path.join(self.log_dir, "hparams.json"), "w") as f:
            json.dump(hp, f, indent=2, default=str)

    def close(self) -> None:
        log.info("evaluating %d deferred diagnostics", len(self._deferred))
        for step, tag, fn in self._deferred:
            self.scalar(tag, fn(), step)
        self._deferred.clear()
        if self.writer is not None:
            self.writer.close()
        self._jsonl.close()
