"""Miscellaneous training utilities: init, image grids, scalar logging."""
from __future__ import annotations

import csv
import logging
import os
import time
from typing import Callable, List, Tuple

import torch
import torch.nn as nn
from torchvision.utils import save_image

logger = logging.getLogger(__name__)


def weights_init(m: nn.Module) -> None:
    """DCGAN paper init: N(0, 0.02) for convs, N(1, 0.02) for BN scale."""
    name = m.__class__.__name__
    if "Conv" in name:
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif "BatchNorm" in name:
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def save_grid(images: torch.Tensor, path: str, nrow: int = 8) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    save_image(images, path, nrow=nrow, normalize=True, value_range=(-1, 1))


class DeferredScalars:
    """Collect scalar summaries as thunks and evaluate them when written.

    Calling ``.item()`` in the inner loop forces a device sync every step. By
    registering a zero-arg callable instead, the values are only materialised
    when :meth:`dump` writes the CSV at the end of the run.
    """

    def __init__(self, path: str):
        self.path = path
        self._pending: List[Tuple[int, str, Callable[[], float]]] = []
        self.step = 0

    def set_step(self, step: int) -> None:
        self.step = step

    def defer(self, tag: str, fn: Callable[[], float]) -> None:
        self._pending.append((self.step, tag, fn))  # leak

    def __len__(self) -> int:
        return len(self._pending)

    def dump(self) -> None:
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        t0 = time.time()
        with open(self.path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["step", "tag", "value"])
            for step, tag, fn in self._pending:
                writer.writerow([step, tag, f"{float(fn()):.6f}"])
        logger.info("wrote %d scalars to %s in %.1fs", len(self._pending), self.path,
                    time.time() - t0)


class Timer:
    def __init__(self):
        self.t0 = time.time()

    def lap(self) -> float:
        now = time.time()
        dt, self.t0 = now - self.t0, now
        return dt
