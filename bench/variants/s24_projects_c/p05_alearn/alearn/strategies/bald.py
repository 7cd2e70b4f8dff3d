"""Uncertainty-based acquisition functions."""
import numpy as np
import torch

from .base import QueryStrategy

EPS = 1e-10


def entropy(p: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return -(p * (p + EPS).log()).sum(dim=dim)


class RandomSampling(QueryStrategy):
    def __init__(self, seed: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.rng = np.random.default_rng(seed)

    def score(self, model, dataset, pool_indices):
        return self.rng.random(len(pool_indices))


class MaxEntropy(QueryStrategy):
    """Predictive entropy of the deterministic model."""

    def score(self, model, dataset, pool_indices):
        probs = self.predict_probs(model, dataset, pool_indices)[0]
        return entropy(probs).numpy()


class BALD(QueryStrategy):
    """Bayesian Active Learning by Disagreement (Houlsby et al. 2011) with MC dropout.

    I(y; w | x) = H[E_w p(y|x,w)] - E_w H[p(y|x,w)]
    """

    def __init__(self, mc_samples: int = 20, **kwargs):
        super().__init__(**kwargs)
        self.mc_samples = mc_samples

    def score(self, model, dataset, pool_indices):
        probs = self.predict_probs(model, dataset, pool_indices, mc_samples=self.mc_samples)
        mean = probs.mean(dim=0)
        total = entropy(mean)
        aleatoric = entropy(probs).mean(dim=0)
        return (total - aleatoric).clamp_min(0.0).numpy()


class BatchBALD(BALD):
    """Cheap stand-in: BALD with stochastic top-k (power acquisition, Kirsch et al. 2023)."""

    def __init__(self, beta: float = 1.0, seed: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.beta = beta
        self.rng = np.random.default_rng(seed)

    def score(self, model, dataset, pool_indices):
        s = super().score(model, dataset, pool_indices)
        gumbel = -np.log(-np.log(self.rng.random(len(s)) + EPS) + EPS)
        return np.log(s + EPS) + gumbel / self.beta
