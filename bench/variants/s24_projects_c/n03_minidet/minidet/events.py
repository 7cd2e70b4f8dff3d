"""Scalar event storage with bounded histories (cf. detectron2.utils.events)."""
from collections import defaultdict, deque
from typing import Dict, Optional

import numpy as np
import torch

_CURRENT_STORAGE = []


class HistoryBuffer:
    """Keeps the last `max_length` (value, iteration) pairs plus a global average."""

    def __init__(self, max_length: int = 1000):
        self._data = deque(maxlen=max_length)
        self._count = 0
        self._global_avg = 0.0

    def update(self, value: float, iteration: int) -> None:
        self._data.append((value, iteration))
        self._count += 1
        self._global_avg += (value - self._global_avg) / self._count

    def latest(self) -> float:
        return self._data[-1][0]

    def median(self, window: int) -> float:
        return float(np.median([v for v, _ in list(self._data)[-window:]]))

    def avg(self, window: int) -> float:
        return float(np.mean([v for v, _ in list(self._data)[-window:]]))

    def global_avg(self) -> float:
        return self._global_avg


class EventStorage:
    def __init__(self, start_iter: int = 0, max_length: int = 1000):
        self.iter = start_iter
        self._history: Dict[str, HistoryBuffer] = defaultdict(lambda: HistoryBuffer(max_length))
        self._latest: Dict[str, float] = {}

    def put_scalar(self, name: str, value, smoothing_hint: bool = True) -> None:
        if isinstance(value, torch.Tensor):
            value = value.detach().float().item()
        value = float(value)
        self._history[name].update(value, self.iter)
        self._latest[name] = value

    def put_scalars(self, **kwargs) -> None:
        for k, v in kwargs.items():
            self.put_scalar(k, v)

    def history(self, name: str) -> HistoryBuffer:
        return self._history[name]

    def latest(self) -> Dict[str, float]:
        return dict(self._latest)

    def step(self) -> None:
        self.iter += 1

    def __enter__(self):
        _CURRENT_STORAGE.append(self)
        return self

    def __exit__(self, *exc):
        assert _CURRENT_STORAGE[-1] is self
        _CURRENT_STORAGE.pop()


def get_event_storage() -> Optional[EventStorage]:
    assert _CURRENT_STORAGE, "get_event_storage() called outside an EventStorage context"
    return _CURRENT_STORAGE[-1]
