from .base import QueryStrategy
from .bald import BALD, MaxEntropy, RandomSampling

STRATEGIES = {"bald": BALD, "entropy": MaxEntropy, "random": RandomSampling}


def get_strategy(name: str, **kwargs) -> QueryStrategy:
    try:
        return STRATEGIES[name](**kwargs)
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; choose from {sorted(STRATEGIES)}") from None
