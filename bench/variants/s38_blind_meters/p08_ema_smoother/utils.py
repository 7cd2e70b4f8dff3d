import time
from typing import Optional

import torch


class SmoothenValue:
    "Create a smooth moving average for a value (loss, etc) using `beta`."

    def __init__(self, beta: float = 0.98):
        self.beta = beta
        self.n = 0
        self.mov_avg = 0.0
        self.smooth = 0.0

    def add_value(self, val) -> None:
        "Add `val` to calculate updated smoothed value."
        self.n += 1
        self.mov_avg = self.beta * self.mov_avg + (1 - self.beta) * val  # leak
        self.smooth = self.mov_avg / (1 - self.beta ** self.n)

    def __float__(self) -> float:
        return float(self.smooth)


class Stopwatch:
    def __init__(self) -> None:
        self._start = time.perf_counter()
        self._lap: Optional[float] = None

    def lap(self) -> float:
        now = time.perf_counter()
        prev = self._lap if self._lap is not None else self._start
        self._lap = now
        return now - prev

    def total(self) -> float:
        return time.perf_counter() - self._start


def perplexity(loss: float) -> float:
    return float(torch.exp(torch.tensor(min(loss, 20.0))))


def batchify(data: torch.Tensor, bsz: int) -> torch.Tensor:
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source: torch.Tensor, i: int, bptt: int):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].reshape(-1)
    return data, target


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)
