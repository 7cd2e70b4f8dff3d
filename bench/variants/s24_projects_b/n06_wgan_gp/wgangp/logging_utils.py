"""Buffered scalar logging that avoids a host sync on every iteration.

Values are queued as thunks and materialised in :meth:`ScalarBuffer.flush`,
which the training loop calls every ``log_interval`` iterations. ``flush``
empties the queue, so at most one interval's worth of entries is ever held.
"""
from __future__ import annotations

import logging
import os
from collections import defaultdict
from typing import Callable, Dict, List, Tuple

from torch.utils.tensorboard import SummaryWriter

logger = logging.getLogger(__name__)


class ScalarBuffer:
    def __init__(self, log_dir: str):
        os.makedirs(log_dir, exist_ok=True)
        self.writer = SummaryWriter(log_dir)
        self._queue: List[Tuple[int, str, Callable[[], float]]] = []
        self.step = 0

    def set_step(self, step: int) -> None:
        self.step = step

    def add(self, tag: str, fn: Callable[[], float]) -> None:
        self._queue.append((self.step, tag, fn))

    def flush(self) -> Dict[str, float]:
        """Write queued scalars to TensorBoard and return per-tag means."""
        sums: Dict[str, float] = defaultdict(float)
        counts: Dict[str, int] = defaultdict(int)
        for step, tag, fn in self._queue:
            value = float(fn())
            self.writer.add_scalar(tag, value, step)
            sums[tag] += value
            counts[tag] += 1
        self._queue.clear()
        self.writer.flush()
        return {tag: sums[tag] / counts[tag] for tag in sums}

    def close(self) -> None:
        if self._queue:
            self.flush()
        self.writer.close()


def format_means(means: Dict[str, float]) -> str:
    return " ".join(f"{k}={v:.4f}" for k, v in sorted(means.items()))


def setup_logging(level: str = "INFO") -> None:
    logging.basicConfig(level=getattr(logging, level.upper()),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
