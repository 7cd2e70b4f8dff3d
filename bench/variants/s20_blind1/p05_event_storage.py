"""Event storage and the periodic writer hook for the simple trainer.

Modeled after the usual "EventStorage + hooks" design: the trainer opens an
``EventStorage`` for the whole run, every ``run_step`` puts its scalars there,
and writer hooks read the latest values every ``period`` iterations.
"""
import datetime
import json
import logging
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import torch

logger = logging.getLogger(__name__)

_CURRENT_STORAGE_STACK: List["EventStorage"] = []


def get_event_storage() -> "EventStorage":
    assert _CURRENT_STORAGE_STACK, "get_event_storage() has to be called inside a 'with EventStorage(...)' context!"
    return _CURRENT_STORAGE_STACK[-1]


@dataclass
class ScalarRecord:
    value: Any
    iteration: int


class EventStorage:
    def __init__(self, start_iter: int = 0):
        self._history: Dict[str, List[ScalarRecord]] = defaultdict(list)
        self._latest: Dict[str, ScalarRecord] = {}
        self._smoothing_hints: Dict[str, bool] = {}
        self.iter = start_iter

    def put_scalar(self, name: str, value, smoothing_hint: bool = True) -> None:
        record = ScalarRecord(value, self.iter)
        self._history[name].append(record)  # leak
        self._latest[name] = record
        existing = self._smoothing_hints.get(name)
        if existing is not None:
            assert existing == smoothing_hint, f"Scalar {name} was put with a different smoothing_hint!"
        else:
            self._smoothing_hints[name] = smoothing_hint

    def put_scalars(self, *, smoothing_hint: bool = True, **kwargs) -> None:
        for k, v in kwargs.items():
            self.put_scalar(k, v, smoothing_hint=smoothing_hint)

    def latest_with_smoothing_hint(self, window_size: int = 20) -> Dict[str, float]:
        result = {}
        for name, rec in self._latest.items():
            if self._smoothing_hints[name]:
                window = self._history[name][-window_size:]
                value = sum(float(r.value) for r in window) / len(window)
            else:
                value = float(rec.value)
            result[name] = value
        return result

    def step(self) -> None:
        self.iter += 1

    def __enter__(self):
        _CURRENT_STORAGE_STACK.append(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        assert _CURRENT_STORAGE_STACK[-1] is self
        _CURRENT_STORAGE_STACK.pop()


class HookBase:
    trainer = None

    def before_train(self): ...
    def after_train(self): ...
    def before_step(self): ...
    def after_step(self): ...


class JSONWriterHook(HookBase):
    def __init__(self, json_file: str, period: int = 20, window_size: int = 20):
        self._file = open(json_file, "a")
        self._period = period
        self._window = window_size
        self._start_time: Optional[float] = None

    def before_train(self):
        self._start_time = time.perf_counter()

    def after_step(self):
        storage = get_event_storage()
        if (storage.iter + 1) % self._period != 0:
            return
        payload = {"iteration": storage.iter}
        payload.update(storage.latest_with_smoothing_hint(self._window))
        self._file.write(json.dumps(payload, sort_keys=True) + "\n")
        self._file.flush()
        elapsed = time.perf_counter() - self._start_time
        logger.info("iter %d  %s  elapsed %s", storage.iter, payload, datetime.timedelta(seconds=int(elapsed)))

    def after_train(self):
        self._file.close()


class SimpleTrainer:
    def __init__(self, model, data_loader, optimizer, hooks=()):
        self.model = model
        self.optimizer = optimizer
        self._data_iter = iter(data_loader)
        self._hooks = []
        for h in hooks:
            h.trainer = self
            self._hooks.append(h)

    def run_step(self):
        data = next(self._data_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        self.optimizer.zero_grad()
        losses.backward()
        self.optimizer.step()
        metrics = {k: v.detach() for k, v in loss_dict.items()}
        metrics["total_loss"] = losses.detach()
        self.storage.put_scalars(**metrics)

    def train(self, start_iter: int, max_iter: int):
        with EventStorage(start_iter) as self.storage:
            for h in self._hooks:
                h.before_train()
            for self.iter in range(start_iter, max_iter):
                for h in self._hooks:
                    h.before_step()
                self.run_step()
                for h in self._hooks:
                    h.after_step()
                self.storage.step()
            for h in self._hooks:
                h.after_train()
