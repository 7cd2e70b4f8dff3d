"""Prediction loop used by ``fastfit.Trainer.predict``.

Walks a dataloader, runs ``predict_step`` and gathers the results.  The
collector is emptied at the start of every run, outputs are moved off the
accelerator as they arrive, so a long-lived trainer that calls ``predict``
many times (e.g. in an active-learning round robin) stays flat in memory.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, List

import torch
from torch import nn

from .utils import move_to_device, tree_map

logger = logging.getLogger(__name__)


@dataclass
class LoopProgress:
    batches_seen: int = 0
    samples_seen: int = 0
    started_at: float = field(default_factory=time.time)

    def throughput(self) -> float:
        return self.samples_seen / max(time.time() - self.started_at, 1e-6)


class OutputCollector:
    """Gathers per-batch outputs on the host."""

    def __init__(self):
        self._chunks: List[Any] = []

    def reset(self) -> None:
        self._chunks.clear()

    def add(self, batch_output: Any) -> None:
        if batch_output is None:
            return
        host = tree_map(lambda t: t.detach().to("cpu", non_blocking=True), batch_output)
        self._chunks.append(host)

    def concatenated(self) -> Any:
        if not self._chunks:
            return None
        first = self._chunks[0]
        if isinstance(first, torch.Tensor):
            return torch.cat(self._chunks, dim=0)
        if isinstance(first, dict):
            return {k: torch.cat([c[k] for c in self._chunks], dim=0) for k in first}
        return list(self._chunks)

    def pop_all(self) -> Any:
        out = self.concatenated()
        self.reset()
        return out


class PredictionLoop:
    def __init__(self, trainer, log_every: int = 50):
        self.trainer = trainer
        self.log_every = log_every
        self.collector = OutputCollector()
        self.progress = LoopProgress()

    @property
    def device(self) -> torch.device:
        return self.trainer.strategy.root_device

    def _predict_one(self, module: nn.Module, batch: Any, batch_idx: int) -> Any:
        batch = move_to_device(batch, self.device)
        if hasattr(module, "predict_step"):
            return module.predict_step(batch, batch_idx)
        return module(**batch) if isinstance(batch, dict) else module(batch)

    def run(self, module: nn.Module, dataloader: Iterable) -> Any:
        self.progress = LoopProgress()
        self.collector.reset()
        was_training = module.training
        module.eval()
        self.trainer.callbacks.on_predict_start(self.trainer, module)
        try:
            with torch.inference_mode():
                for batch_idx, batch in enumerate(dataloader):
                    out = self._predict_one(module, batch, batch_idx)
                    self.collector.add(out)
                    self.progress.batches_seen += 1
                    self.progress.samples_seen += _batch_size(batch)
                    if batch_idx % self.log_every == 0:
                        logger.debug("predict: batch %d (%.1f samples/s)",
                                     batch_idx, self.progress.throughput())
        finally:
            module.train(was_training)
        results = self.collector.pop_all()
        self.trainer.callbacks.on_predict_end(self.trainer, module, results)
        logger.info("Prediction finished: %d batches", self.progress.batches_seen)
        return results


def _batch_size(batch: Any) -> int:
    if isinstance(batch, torch.Tensor):
        return batch.shape[0]
    if isinstance(batch, dict):
        for v in batch.values():
            if isinstance(v, torch.Tensor):
                return v.shape[0]
    if isinstance(batch, (list, tuple)) and batch:
        return _batch_size(batch[0])
    return 0
