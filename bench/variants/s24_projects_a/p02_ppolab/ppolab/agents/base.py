"""Common agent plumbing: device handling, checkpointing, metric history."""
import logging
import os
from collections import defaultdict
from typing import Dict, List

import torch
import torch.nn as nn

log = logging.getLogger(__name__)


class BaseAgent:
    """Base class for all agents.

    Subclasses implement :meth:`act` and :meth:`update`; this class keeps track
    of training metrics so that the runner can print a compact summary.
    """

    def __init__(self, device: str = "cpu"):
        self.device = torch.device(device)
        self.history: Dict[str, List] = defaultdict(list)
        self.num_updates = 0
        self._modules: Dict[str, nn.Module] = {}

    # ------------------------------------------------------------------ #
    # modules / checkpointing
    # ------------------------------------------------------------------ #
    def register(self, name: str, module: nn.Module) -> nn.Module:
        module = module.to(self.device)
        self._modules[name] = module
        return module

    def state_dict(self) -> dict:
        state = {name: m.state_dict() for name, m in self._modules.items()}
        state["num_updates"] = self.num_updates
        return state

    def save(self, path: str) -> None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        torch.save(self.state_dict(), path)
        log.info("saved agent to %s", path)

    def load(self, path: str) -> None:
        state = torch.load(path, map_location=self.device)
        for name, m in self._modules.items():
            m.load_state_dict(state[name])
        self.num_updates = state.get("num_updates", 0)

    # ------------------------------------------------------------------ #
    # metrics
    # ------------------------------------------------------------------ #
    def record(self, **metrics) -> None:
        """Store one value per metric for the current update."""
        for key, value in metrics.items():
            self.history[key].append(value)  # leak

    def summary(self, window: int = 20) -> Dict[str, float]:
        out = {}
        for key, values in self.history.items():
            recent = values[-window:]
            if recent:
                out[key] = float(sum(float(v) for v in recent) / len(recent))
        return out

    # ------------------------------------------------------------------ #
    def act(self, obs):
        raise NotImplementedError

    def update(self, rollout):
        raise NotImplementedError
