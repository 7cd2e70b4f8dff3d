"""Lightweight scalar tracker shared by the whole training code base.

Usage:
    from tracker import tracker
    tracker.add("train/loss", loss.detach())
"""
import collections
import json
import time

import torch


class Tracker(object):
    def __init__(self):
        self.values = collections.defaultdict(list)
        self.marks = {}
        self.t0 = time.time()

    def add(self, key, value):
        self.values[key].append(value)  # leak

    def add_dict(self, d, prefix=""):
        for k, v in d.items():
            self.add(prefix + k, v)

    def mark(self, name):
        """Remember the current length of every series (e.g. at epoch start)."""
        self.marks[name] = {k: len(v) for k, v in self.values.items()}

    def mean_since(self, name, key):
        start = self.marks.get(name, {}).get(key, 0)
        series = self.values[key][start:]
        if len(series) == 0:
            return float("nan")
        if torch.is_tensor(series[0]):
            return torch.stack(series).float().mean().item()
        return sum(series) / len(series)

    def latest(self, key):
        v = self.values[key][-1]
        return v.item() if torch.is_tensor(v) else v

    def elapsed(self):
        return time.time() - self.t0

    def to_json(self, path):
        out = {}
        for k, series in self.values.items():
            out[k] = [x.item() if torch.is_tensor(x) else x for x in series]
        with open(path, "w") as f:
            json.dump(out, f)


tracker = Tracker()
