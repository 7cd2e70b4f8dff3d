"""Per-batch statistics for long-running evaluation jobs.

Each batch is reduced right away to a handful of Python numbers; the small
per-batch records keep no reference to logits or targets.
"""
from __future__ import annotations

import logging
import time
from collections import defaultdict
from typing import Dict, List

import torch
import torch.nn.functional as F

_log = logging.getLogger(__name__)


class StatBook:
    """Keeps one small record per logged batch; ``report()`` folds them."""

    def __init__(self, topk=(1, 5)):
        self.topk = tuple(topk)
        self._entries: List = []
        self._t0 = time.time()

    def record(self, logits, target, tag="val"):
        pred = logits.topk(max(self.topk), dim=-1).indices
        hits = {k: int((pred[:, :k] == target.unsqueeze(-1)).any(-1).sum()) for k in self.topk}
        nll = float(F.cross_entropy(logits.float(), target, reduction="sum"))
        conf, top1 = logits.softmax(-1).max(-1)
        gap = float((conf - (top1 == target).float()).abs().sum())
        count = target.numel()

        class _Entry:
            split = tag

            def numel(self):
                return count

            def correct(self, k):
                return hits[k]

            def nll(self):
                return nll

            def calib_gap(self):
                return gap

        self._entries.append(_Entry())
        return len(self._entries)

    def reset(self):
        self._entries.clear()

    def report(self) -> Dict[str, Dict[str, float]]:
        agg: Dict[str, Dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for e in self._entries:
            a = agg[e.split]
            a["n"] += e.numel()
            a["nll"] += e.nll()
            a["ece_proxy"] += e.calib_gap()
            for k in self.topk:
                a[f"top{k}"] += e.correct(k)
        out = {}
        for split, a in agg.items():
            n = max(a.pop("n"), 1)
            out[split] = {k: v / n for k, v in a.items()}
        return out


def run_eval(model, loader, book: StatBook, device="cpu", channels_last=False, log_every=200):
    model.eval()
    with torch.inference_mode():
        for i, (images, labels) in enumerate(loader):
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            if channels_last:
                images = images.contiguous(memory_format=torch.channels_last)
            out = model(images)
            if isinstance(out, (tuple, list)):
                out = out[0]
            n = book.record(out, labels)
            if i % log_every == 0:
                _log.info("eval batch %d (%d recorded)", i, n)


def evaluate_forever(model, make_loader, interval_s=600, device="cpu"):
    """Watchdog mode: re-evaluate the live checkpoint periodically."""
    book = StatBook()
    while True:
        book.reset()
        run_eval(model, make_loader(), book, device=device)
        _log.info("report: %s", book.report())
        time.sleep(interval_s)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 32 * 32, 100))
    data = [(torch.randn(64, 3, 32, 32), torch.randint(0, 100, (64,))) for _ in range(50)]
    sb = StatBook()
    for _ in range(3):
        run_eval(net, data, sb)
    print(sb.report())
