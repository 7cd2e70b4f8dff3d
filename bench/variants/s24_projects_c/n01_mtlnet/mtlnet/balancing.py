"""Loss balancing schemes for multi-task learning."""
import math
from collections import deque
from typing import Dict, Iterable

import torch
import torch.nn as nn

__all__ = ["DynamicWeightAverage", "UncertaintyWeighting", "TaskLossTracker"]


class TaskLossTracker:
    """Running per-task means for the current epoch, stored as Python floats."""

    def __init__(self, tasks: Iterable[str]):
        self.tasks = list(tasks)
        self.reset()

    def reset(self) -> None:
        self._sum = {t: 0.0 for t in self.tasks}
        self._n = 0

    def update(self, losses: Dict[str, torch.Tensor]) -> None:
        for t in self.tasks:
            self._sum[t] += losses[t].detach().item()
        self._n += 1

    def means(self) -> Dict[str, float]:
        return {t: s / max(self._n, 1) for t, s in self._sum.items()}


class DynamicWeightAverage:
    """DWA (Liu et al., CVPR 2019): w_k ∝ exp(r_k / T), r_k = L_k(t-1) / L_k(t-2)."""

    def __init__(self, tasks: Iterable[str], temperature: float = 2.0):
        self.tasks = list(tasks)
        self.temperature = temperature
        self.tracker = TaskLossTracker(self.tasks)
        self._epoch_means = deque(maxlen=2)
        self.weights = {t: 1.0 for t in self.tasks}

    def observe(self, losses: Dict[str, torch.Tensor]) -> None:
        self.tracker.update(losses)

    def end_epoch(self) -> Dict[str, float]:
        self._epoch_means.append(self.tracker.means())
        self.tracker.reset()
        if len(self._epoch_means) == 2:
            prev2, prev1 = self._epoch_means
            ratios = {t: prev1[t] / max(prev2[t], 1e-8) for t in self.tasks}
            exps = {t: math.exp(r / self.temperature) for t, r in ratios.items()}
            z = sum(exps.values())
            self.weights = {t: len(self.tasks) * e / z for t, e in exps.items()}
        return dict(self.weights)

    def combine(self, losses: Dict[str, torch.Tensor]) -> torch.Tensor:
        return sum(self.weights[t] * losses[t] for t in self.tasks)


class UncertaintyWeighting(nn.Module):
    """Kendall et al. 2018: L = sum_k exp(-s_k) L_k + s_k, with learned s_k = log sigma_k^2."""

    def __init__(self, tasks: Iterable[str]):
        super().__init__()
        self.tasks = list(tasks)
        self.log_vars = nn.Parameter(torch.zeros(len(self.tasks)))

    def forward(self, losses: Dict[str, torch.Tensor]) -> torch.Tensor:
        total = 0.0
        for i, t in enumerate(self.tasks):
            total = total + torch.exp(-self.log_vars[i]) * losses[t] + self.log_vars[i]
        return total

    def current_weights(self) -> Dict[str, float]:
        return {t: float(torch.exp(-lv)) for t, lv in zip(self.tasks, self.log_vars.detach())}
