"""Running averages and ranking metrics.

Meters only ever hold Python numbers: values coming from the training step are
converted with ``.item()`` before being accumulated.
"""
from __future__ import annotations

import math

import torch


class RunningMean:
    """Sample-weighted mean; reset by the owner at the end of each epoch."""

    def __init__(self, name: str):
        self.name = name
        self.reset()

    def reset(self) -> None:
        self.total = 0.0
        self.count = 0

    def update(self, value, n: int = 1) -> None:
        if torch.is_tensor(value):
            value = value.detach().item()
        self.total += float(value) * n
        self.count += n

    def compute(self) -> float:
        return self.total / self.count if self.count else float("nan")


def ndcg_at_k(rank: torch.Tensor, k: int) -> torch.Tensor:
    """NDCG for a single held-out positive given its 0-based rank."""
    gain = 1.0 / torch.log2(rank.float() + 2.0)
    return torch.where(rank < k, gain, torch.zeros_like(gain))


class HitRateAtK:
    """Leave-one-out HR@K / NDCG@K over sampled negatives."""

    def __init__(self, k: int = 10):
        self.k = k
        self.reset()

    def reset(self) -> None:
        self.hits = 0.0
        self.ndcg = 0.0
        self.n = 0

    @torch.no_grad()
    def update(self, pos_scores: torch.Tensor, neg_scores: torch.Tensor) -> None:
        # rank of the positive among (1 + num_neg) candidates
        rank = (neg_scores >= pos_scores.unsqueeze(1)).sum(dim=1)
        self.hits += (rank < self.k).float().sum().item()
        self.ndcg += ndcg_at_k(rank, self.k).sum().item()
        self.n += rank.numel()

    def compute(self) -> dict:
        if self.n == 0:
            return {f"hr@{self.k}": math.nan, f"ndcg@{self.k}": math.nan}
        return {f"hr@{self.k}": self.hits / self.n, f"ndcg@{self.k}": self.ndcg / self.n}
