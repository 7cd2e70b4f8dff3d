"""litrec: implicit-feedback recommenders in PyTorch Lightning."""
from .meters import HitRateAtK, RunningMean, ndcg_at_k

__all__ = ["HitRateAtK", "RunningMean", "ndcg_at_k"]
__version__ = "0.2.3"
