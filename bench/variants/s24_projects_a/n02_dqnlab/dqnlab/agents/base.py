"""Shared agent functionality: epsilon schedule, metric window, checkpoints."""
import logging
from collections import defaultdict, deque
from typing import Deque, Dict

import torch

log = logging.getLogger(__name__)


class LinearSchedule:
    def __init__(self, start: float, end: float, duration: int):
        self.start, self.end, self.duration = start, end, duration

    def __call__(self, t: int) -> float:
        frac = min(1.0, t / max(1, self.duration))
        return self.start + frac * (self.end - self.start)


class BaseAgent:
    """Keeps a sliding window of recent training metrics.

    Only the last ``metric_window`` values of each metric are retained.
    """

    def __init__(self, device: str = "cpu", metric_window: int = 100):
        self.device = torch.device(device)
        self.metric_window = metric_window
        self.metrics: Dict[str, Deque] = defaultdict(lambda: deque(maxlen=self.metric_window))
        self.train_steps = 0

    def record(self, **values) -> None:
        for key, value in values.items():
            self.metrics[key].append(value)

    def metric_means(self) -> Dict[str, float]:
        means = {}
        for key, window in self.metrics.items():
            if len(window):
                means[key] = torch.stack([torch.as_tensor(v, dtype=torch.float32) for v in window]).mean().item()
        return means

    def networks(self) -> Dict[str, torch.nn.Module]:
        return {}

    def save(self, path: str) -> None:
        torch.save({"nets": {k: v.state_dict() for k, v in self.networks().items()},
                    "train_steps": self.train_steps}, path)
        log.info("checkpoint -> %s", path)

    def load(self, path: str) -> None:
        ckpt = torch.load(path, map_location=self.device)
        for k, net in self.networks().items():
            net.load_state_dict(ckpt["nets"][k])
        self.train_steps = ckpt["train_steps"]
