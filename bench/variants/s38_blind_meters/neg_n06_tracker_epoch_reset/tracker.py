"""Lightweight scalar tracker shared by the whole training code base.

Usage:
    from tracker import tracker
    tracker.add("train/loss", loss.detach())
    ...
    tracker.end_epoch()   # reduces the epoch's values to floats
"""
import collections
import json
import time

import torch


class Tracker(object):
    def __init__(self):
        self.current = collections.defaultdict(list)
        self.history = collections.defaultdict(list)
        self.t0 = time.time()

    def add(self, key, value):
        self.current[key].append(value)

    def add_dict(self, d, prefix=""):
        for k, v in d.items():
            self.add(prefix + k, v)

    def _reduce(self, series):
        if len(series) == 0:
            return float("nan")
        if torch.is_tensor(series[0]):
            return torch.stack(series).float().mean().item()
        return sum(series) / len(series)

    def end_epoch(self):
        """Reduce this epoch's values to one float per key and start fresh."""
        means = {}
        for key, series in self.current.items():
            means[key] = self._reduce(series)
            self.history[key].append(means[key])
        self.current.clear()
        return means

    def latest(self, key):
        return self.history[key][-1] if self.history[key] else float("nan")

    def elapsed(self):
        return time.time() - self.t0

    def to_json(self, path):
        with open(path, "w") as f:
            json.dump(dict(self.history), f)


tracker = Tracker()
