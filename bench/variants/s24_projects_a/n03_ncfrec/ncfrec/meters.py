"""Metric accumulators for training and ranking evaluation."""
import math
from typing import Iterable, List

__all__ = ["AverageMeter", "RankingMeter", "hit_ratio", "ndcg"]


class AverageMeter:
    """Running average of a scalar; expects python numbers."""

    def __init__(self, name: str = ""):
        self.name = name
        self.reset()

    def reset(self) -> None:
        self.sum = 0.0
        self.count = 0

    def update(self, value: float, n: int = 1) -> None:
        self.sum += value * n
        self.count += n

    @property
    def avg(self) -> float:
        return self.sum / max(self.count, 1)

    def __repr__(self) -> str:
        return f"{self.name}={self.avg:.4f}"


def hit_ratio(ranked: List[int], target: int) -> float:
    return 1.0 if target in ranked else 0.0


def ndcg(ranked: List[int], target: int) -> float:
    if target in ranked:
        return 1.0 / math.log2(ranked.index(target) + 2)
    return 0.0


class RankingMeter:
    """Accumulates HR@K / NDCG@K over users (per evaluation pass)."""

    def __init__(self, k: int = 10):
        self.k = k
        self.hr = AverageMeter(f"HR@{k}")
        self.ndcg = AverageMeter(f"NDCG@{k}")

    def add(self, ranked_items: Iterable[int], target: int) -> None:
        ranked = list(ranked_items)[: self.k]
        self.hr.update(hit_ratio(ranked, target))
        self.ndcg.update(ndcg(ranked, target))

    def result(self) -> dict:
        return {self.hr.name: self.hr.avg, self.ndcg.name: self.ndcg.avg}
