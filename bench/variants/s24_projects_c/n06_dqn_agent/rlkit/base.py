"""Agent base class: metric bookkeeping and checkpoint helpers shared by all agents."""
import logging
import os
from collections import defaultdict, deque
from typing import Deque, Dict

import numpy as np
import torch

logger = logging.getLogger(__name__)


class BaseAgent:
    """Subclasses implement act() and learn(); metrics are kept as floats in short windows."""

    def __init__(self, device: str = "cuda", metric_window: int = 100):
        self.device = torch.device(device)
        self.metric_window = metric_window
        self.metrics: Dict[str, Deque[float]] = defaultdict(lambda: deque(maxlen=self.metric_window))
        self.env_errors: Deque[str] = deque(maxlen=20)
        self.steps_done = 0

    def record(self, **values) -> None:
        for k, v in values.items():
            if isinstance(v, torch.Tensor):
                v = v.detach().item()
            self.metrics[k].append(float(v))

    def record_error(self, exc: BaseException) -> None:
        """Keep a short textual trail of env failures without holding frames alive."""
        self.env_errors.append(f"{type(exc).__name__}: {exc}")
        logger.warning("environment error at step %d: %r", self.steps_done, exc)

    def summary(self) -> Dict[str, float]:
        return {k: float(np.mean(v)) for k, v in self.metrics.items() if len(v)}

    def modules(self) -> Dict[str, torch.nn.Module]:
        raise NotImplementedError

    def save(self, path: str) -> None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        torch.save({k: m.state_dict() for k, m in self.modules().items()} | {"steps": self.steps_done}, path)

    def load(self, path: str) -> None:
        state = torch.load(path, map_location=self.device)
        for k, m in self.modules().items():
            m.load_state_dict(state[k])
        self.steps_done = state.get("steps", 0)
