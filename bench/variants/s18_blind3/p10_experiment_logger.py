"""Buffered experiment logger that writes to TensorBoard and a JSONL file.

Framework code calls ``log_scalar`` / ``log_histogram`` from anywhere; the
runner calls ``flush(step)`` every ``log_interval`` iterations.
"""
import json
import os
import time
from collections import defaultdict

from torch.utils.tensorboard import SummaryWriter


class ExperimentLogger:
    _instance = None

    def __init__(self, log_dir, flush_secs=30):
        os.makedirs(log_dir, exist_ok=True)
        self.log_dir = log_dir
        self.writer = SummaryWriter(log_dir, flush_secs=flush_secs)
        self._jsonl = open(os.path.join(log_dir, "metrics.jsonl"), "a")
        self._scalars = defaultdict(list)
        self._histograms = defaultdict(list)
        self._t0 = time.time()

    @classmethod
    def get(cls, log_dir=None):
        if cls._instance is None:
            if log_dir is None:
                raise RuntimeError("ExperimentLogger not initialised")
            cls._instance = cls(log_dir)
        return cls._instance

    def log_scalar(self, name, value):
        if hasattr(value, "item"):
            value = value.item()
        self._scalars[name].append(float(value))

    def log_histogram(self, name, values):
        self._histograms[name].append(values.detach().flatten())  # leak

    def flush(self, step):
        record = {"step": step, "time": round(time.time() - self._t0, 2)}
        for name, vals in self._scalars.items():
            if not vals:
                continue
            mean = sum(vals) / len(vals)
            self.writer.add_scalar(name, mean, step)
            record[name] = mean
        self._scalars.clear()
        for name, chunks in self._histograms.items():
            if chunks:
                self.writer.add_histogram(name, chunks[-1].float().cpu(), step)
        self._jsonl.write(json.dumps(record) + "\n")
        self._jsonl.flush()

    def close(self):
        self.writer.close()
        self._jsonl.close()


def log_scalar(name, value):
    ExperimentLogger.get().log_scalar(name, value)


def log_histogram(name, values):
    ExperimentLogger.get().log_histogram(name, values)
