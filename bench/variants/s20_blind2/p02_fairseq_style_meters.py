# Copyright (c) the speech-ssl authors.
#
# Meters and a metrics aggregator in the style of fairseq.logging.meters,
# trimmed down for our wav2vec-ish pretraining code.
"""Meters used by the trainer to aggregate per-update statistics."""

import bisect
import time
from collections import OrderedDict
from typing import Dict, Optional


def safe_round(number, ndigits):
    if hasattr(number, "__round__"):
        return round(number, ndigits)
    if hasattr(number, "item"):
        return safe_round(number.item(), ndigits)
    return number


def type_as(a, b):
    if hasattr(b, "to") and hasattr(a, "to"):
        return a.to(b)
    return a


class Meter(object):
    """Base class for Meters."""

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        pass

    def reset(self):
        raise NotImplementedError

    @property
    def smoothed_value(self) -> float:
        raise NotImplementedError


class AverageMeter(Meter):
    """Computes and stores the average and current value."""

    def __init__(self, round: Optional[int] = None):
        self.round = round
        self.reset()

    def reset(self):
        self.val = None
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        if val is not None:
            self.val = val
            if n > 0:
                self.sum = type_as(self.sum, val) + (val * n)
                self.count = type_as(self.count, n) + n

    @property
    def avg(self):
        return self.sum / self.count if self.count > 0 else self.val

    @property
    def smoothed_value(self) -> float:
        val = self.avg
        if self.round is not None and val is not None:
            val = safe_round(val, self.round)
        return val


class HistoryMeter(AverageMeter):
    """AverageMeter that also remembers every value, so that the trainer can
    compute percentiles of e.g. grad norm / loss scale for the progress bar."""

    def __init__(self, round: Optional[int] = None):
        self.history = []
        super().__init__(round=round)

    def update(self, val, n=1):
        super().update(val, n)
        if val is not None:
            self.history.append(val)  # leak

    def percentile(self, q: float):
        if not self.history:
            return None
        vals = sorted(float(v) for v in self.history)
        idx = min(len(vals) - 1, bisect.bisect_left(range(len(vals)), q * len(vals)))
        return vals[idx]


class TimeMeter(Meter):
    """Computes the average occurrence of some event per second"""

    def __init__(self, init: int = 0, n: int = 0, round: Optional[int] = None):
        self.round = round
        self.reset(init, n)

    def reset(self, init=0, n=0):
        self.init = init
        self.start = time.perf_counter()
        self.n = n

    def update(self, val=1):
        self.n = type_as(self.n, val) + val

    @property
    def avg(self):
        return self.n / max(time.perf_counter() - self.start + self.init, 1e-6)

    @property
    def smoothed_value(self) -> float:
        val = self.avg
        if self.round is not None and val is not None:
            val = safe_round(val, self.round)
        return val


class MetersDict(OrderedDict):
    """A sorted dictionary of :class:`Meters`."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.priorities = []

    def add_meter(self, key, meter, priority=100):
        assert key not in self, key
        bisect.insort(self.priorities, (priority, len(self.priorities), key))
        super().__setitem__(key, meter)

    def get_smoothed_values(self) -> Dict[str, float]:
        return OrderedDict(
            (key, self[key].smoothed_value) for _, _, key in self.priorities
            if not key.startswith("_")
        )

    def reset(self):
        for meter in self.values():
            meter.reset()


_aggregators: Dict[str, MetersDict] = OrderedDict()


def get_meters(name: str) -> MetersDict:
    if name not in _aggregators:
        _aggregators[name] = MetersDict()
    return _aggregators[name]


def log_scalar(key: str, value, weight: float = 1, priority: int = 10, round: Optional[int] = None,
               aggregator: str = "train"):
    agg = get_meters(aggregator)
    if key not in agg:
        agg.add_meter(key, HistoryMeter(round=round), priority)
    agg[key].update(value, weight)


def log_speed(key: str, value: float, priority: int = 30, aggregator: str = "train"):
    agg = get_meters(aggregator)
    if key not in agg:
        agg.add_meter(key, TimeMeter(), priority)
    agg[key].update(value)


def reduce_metrics(logging_outputs, aggregator="train"):
    """Aggregate logging outputs from data parallel training (criterion hook)."""
    loss_sum = sum(log.get("loss", 0) for log in logging_outputs)
    ntokens = sum(log.get("ntokens", 0) for log in logging_outputs)
    sample_size = sum(log.get("sample_size", 0) for log in logging_outputs)
    log_scalar("loss", loss_sum / max(sample_size, 1) / 0.6931, sample_size, round=3,
               aggregator=aggregator)
    if "gnorm" in logging_outputs[0]:
        log_scalar("gnorm", logging_outputs[0]["gnorm"], 1, priority=400, round=3,
                   aggregator=aggregator)
    log_speed("wps", ntokens, aggregator=aggregator)


def train_step(model, criterion, optimizer, sample):
    """One update; the criterion returns (loss, sample_size, logging_output)."""
    model.train()
    optimizer.zero_grad()
    loss, sample_size, logging_output = criterion(model, sample)
    loss.backward()
    gnorm = optimizer.clip_grad_norm(max_norm=10.0)
    optimizer.step()
    logging_output["gnorm"] = gnorm
    reduce_metrics([logging_output])
    return get_meters("train").get_smoothed_values()
