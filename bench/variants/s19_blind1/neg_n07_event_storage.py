# -*- coding: utf-8 -*-
"""Event storage and the simple trainer that writes into it.

Modelled after detectron2's ``EventStorage``: hooks and the trainer put
scalars under a name, writers later read smoothed values out of the history.
"""
import logging
import time
from collections import defaultdict, deque
from contextlib import contextmanager

import numpy as np
import torch

__all__ = ["HistoryBuffer", "EventStorage", "get_event_storage", "SimpleTrainer"]

logger = logging.getLogger(__name__)
_CURRENT_STORAGE_STACK = []


def get_event_storage():
    assert len(_CURRENT_STORAGE_STACK), \
        "get_event_storage() has to be called inside a 'with EventStorage(...)' context!"
    return _CURRENT_STORAGE_STACK[-1]


class HistoryBuffer:
    """Track a series of scalar values and provide access to smoothed
    values over a window or the global average of the series."""

    def __init__(self, max_length=1000):
        self._max_length = max_length
        self._data = deque(maxlen=max_length)
        self._count = 0
        self._global_avg = 0.0

    def update(self, value, iteration=None):
        if iteration is None:
            iteration = self._count
        self._data.append((value, iteration))
        self._count += 1
        self._global_avg += (value - self._global_avg) / self._count

    def latest(self):
        return self._data[-1][0]

    def median(self, window_size):
        return np.median([x[0] for x in list(self._data)[-window_size:]])

    def avg(self, window_size):
        return np.mean([x[0] for x in list(self._data)[-window_size:]])

    def global_avg(self):
        return float(self._global_avg)

    def values(self):
        return list(self._data)


class EventStorage:
    def __init__(self, start_iter=0):
        self._history = defaultdict(HistoryBuffer)
        self._smoothing_hints = {}
        self._latest_scalars = {}
        self._iter = start_iter
        self._current_prefix = ""

    def put_scalar(self, name, value, smoothing_hint=True):
        name = self._current_prefix + name
        history = self._history[name]
        if isinstance(value, torch.Tensor):
            value = value.detach().cpu().item()
        value = float(value)
        history.update(value, self._iter)
        self._latest_scalars[name] = (value, self._iter)
        existing_hint = self._smoothing_hints.get(name)
        if existing_hint is not None:
            assert existing_hint == smoothing_hint, \
                "Scalar {} was put with a different smoothing_hint!".format(name)
        else:
            self._smoothing_hints[name] = smoothing_hint

    def put_scalars(self, *, smoothing_hint=True, **kwargs):
        for k, v in kwargs.items():
            self.put_scalar(k, v, smoothing_hint=smoothing_hint)

    def history(self, name):
        ret = self._history.get(name, None)
        if ret is None:
            raise KeyError("No history metric available for {}!".format(name))
        return ret

    def latest_with_smoothing_hint(self, window_size=20):
        result = {}
        for k, (v, itr) in self._latest_scalars.items():
            result[k] = (
                self._history[k].median(window_size) if self._smoothing_hints[k] else float(v),
                itr,
            )
        return result

    def step(self):
        self._iter += 1

    @property
    def iter(self):
        return self._iter

    @contextmanager
    def name_scope(self, name):
        old_prefix = self._current_prefix
        self._current_prefix = name.rstrip("/") + "/"
        yield
        self._current_prefix = old_prefix

    def __enter__(self):
        _CURRENT_STORAGE_STACK.append(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        assert _CURRENT_STORAGE_STACK[-1] == self
        _CURRENT_STORAGE_STACK.pop()


class SimpleTrainer:
    """Minimal iteration-based trainer: one data batch, one optimizer step."""

    def __init__(self, model, data_loader, optimizer, hooks=()):
        self.model = model
        self.data_loader = data_loader
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer
        self._hooks = list(hooks)
        self.iter = 0

    def run_step(self):
        assert self.model.training, "[SimpleTrainer] model was changed to eval mode!"
        start = time.perf_counter()
        data = next(self._data_loader_iter)
        data_time = time.perf_counter() - start

        loss_dict = self.model(data)
        if isinstance(loss_dict, torch.Tensor):
            losses = loss_dict
            loss_dict = {"total_loss": loss_dict}
        else:
            losses = sum(loss_dict.values())

        self.optimizer.zero_grad()
        losses.backward()
        self.optimizer.step()

        storage = get_event_storage()
        storage.put_scalar("data_time", data_time)
        storage.put_scalars(total_loss=losses, **loss_dict)
        storage.put_scalar("lr", self.optimizer.param_groups[0]["lr"], smoothing_hint=False)

    def train(self, start_iter, max_iter):
        logger.info("Starting training from iteration %d", start_iter)
        self.iter = start_iter
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
