# Copyright (c) the authors. Licensed under the MIT license.
"""
Lightweight metric aggregation in the spirit of fairseq.logging.metrics.

Criterions call :func:`log_scalar` from ``reduce_metrics``; the trainer calls
:func:`get_smoothed_values` every ``log_interval`` updates to build the
progress-bar dict.  Meters are grouped in named aggregators that live for
the lifetime of the process ("default") or of an ``aggregate()`` block.
"""
import contextlib
import time
import uuid
from collections import OrderedDict, defaultdict
from typing import Dict, Optional


def safe_round(number, ndigits):
    if hasattr(number, "__round__"):
        return round(number, ndigits)
    if hasattr(number, "item"):
        return safe_round(number.item(), ndigits)
    return number


class Meter(object):
    """Base class for Meters."""

    def reset(self):
        pass

    @property
    def smoothed_value(self) -> float:
        raise NotImplementedError


class AverageMeter(Meter):
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
                self.sum = self.sum + (val * n)
                self.count += n

    @property
    def avg(self):
        return self.sum / self.count if self.count > 0 else self.val

    @property
    def smoothed_value(self):
        val = self.avg
        if self.round is not None and val is not None:
            val = safe_round(val, self.round)
        return val


class MedianMeter(Meter):
    """Median of all values observed so far (robust to loss spikes)."""

    def __init__(self, round: Optional[int] = None):
        self.round = round
        self.history = []

    def reset(self):
        self.history = []

    def update(self, val):
        if val is not None:
            self.history.append(val)  # leak

    @property
    def smoothed_value(self):
        if not self.history:
            return None
        ordered = sorted(float(v) for v in self.history)
        mid = ordered[len(ordered) // 2]
        return safe_round(mid, self.round) if self.round is not None else mid


class TimeMeter(Meter):
    def __init__(self):
        self.reset()

    def reset(self):
        self.start = time.perf_counter()
        self.n = 0

    def update(self, val=1):
        self.n += val

    @property
    def smoothed_value(self):
        elapsed = time.perf_counter() - self.start
        return self.n / elapsed if elapsed > 0 else 0.0


_aggregators: "OrderedDict[str, Dict[str, Meter]]" = OrderedDict()
_active_aggregators: "OrderedDict[str, Dict[str, Meter]]" = OrderedDict()
_aggregators["default"] = {}
_active_aggregators["default"] = _aggregators["default"]


@contextlib.contextmanager
def aggregate(name: Optional[str] = None, new_root: bool = False):
    name = name or str(uuid.uuid4())
    created = name not in _aggregators
    agg = _aggregators.setdefault(name, {})
    backup = None
    if new_root:
        backup = _active_aggregators.copy()
        _active_aggregators.clear()
    _active_aggregators[name] = agg
    try:
        yield agg
    finally:
        del _active_aggregators[name]
        if backup is not None:
            _active_aggregators.update(backup)
        if created and name not in ("train", "valid", "default"):
            del _aggregators[name]


def log_scalar(key: str, value, weight: float = 1, round: Optional[int] = None):
    for agg in _active_aggregators.values():
        if key not in agg:
            agg[key] = AverageMeter(round=round)
        agg[key].update(value, weight)


def log_median(key: str, value, round: Optional[int] = None):
    for agg in _active_aggregators.values():
        if key not in agg:
            agg[key] = MedianMeter(round=round)
        agg[key].update(value)


def log_speed(key: str, value=1):
    for agg in _active_aggregators.values():
        agg.setdefault(key, TimeMeter()).update(value)


def get_smoothed_values(name: str) -> Dict[str, float]:
    agg = _aggregators.get(name, {})
    return OrderedDict((k, m.smoothed_value) for k, m in agg.items())


def reset_meters(name: str) -> None:
    for meter in _aggregators.get(name, {}).values():
        meter.reset()


class LabelSmoothedCrossEntropyMetrics:
    """What a criterion's ``reduce_metrics`` typically does with these helpers."""

    @staticmethod
    def reduce_metrics(logging_outputs) -> None:
        loss_sum = sum(log.get("loss", 0) for log in logging_outputs)
        nll_sum = sum(log.get("nll_loss", 0) for log in logging_outputs)
        ntokens = sum(log.get("ntokens", 0) for log in logging_outputs)
        log_scalar("loss", loss_sum / max(ntokens, 1), ntokens, round=3)
        log_median("nll_median", nll_sum / max(ntokens, 1), round=3)
        log_speed("wps", ntokens)
