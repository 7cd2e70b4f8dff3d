"""Prediction loop used by ``fastfit.Trainer.predict``.

The loop is intentionally small: it walks a dataloader, moves batches to the
accelerator, runs the model's ``predict_step`` and hands the results to an
``OutputCollector`` so that callbacks (writers, visualisers) can look at the
full set of predictions in ``on_predict_end``.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional

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
        dt = max(time.time() - self.started_at, 1e-6)
        return self.samples_seen / dt


class OutputCollector:
    """Gathers per-batch outputs of the prediction loop.

    Outputs are kept as produced by ``predict_step`` (usually a tensor or a
    dict of tensors).  ``concatenated()`` stitches them back together along
    the batch dimension.
    """

    def __init__(self, keep_on_device: bool = True):
        self.keep_on_device = keep_on_device
        self._chunks: List[Any] = []

    def add(self, batch_output: Any) -> None:
        if batch_output is None:
            return
        if not self.keep_on_device:
            batch_output = tree_map(lambda t: t.cpu(), batch_output)
        self._chunks.append(batch_output)  # leak

    def __len__(self) -> int:
        return len(self._chunks)

    def concatenated(self) -> Any:
        if not self._chunks:
            return None
        first = self._chunks[0]
        if isinstance(first, torch.Tensor):
            return torch.cat(self._chunks, dim=0)
        if isinstance(first, dict):
            return {k: torch.cat([c[k] for c in self._chunks], dim=0) for k in first}
        return list(self._chunks)


class PredictionLoop:
    """Runs inference over a dataloader.

    A single loop instance lives on the ``Trainer`` and is reused for every
    ``trainer.predict(...)`` call.
    """

    def __init__(self, trainer, keep_on_device: bool = True, log_every: int = 50):
        self.trainer = trainer
        self.log_every = log_every
        self.collector = OutputCollector(keep_on_device=keep_on_device)
        self.progress = LoopProgress()
        self._hooks: List[Callable[..., None]] = []

    @property
    def device(self) -> torch.device:
        return self.trainer.strategy.root_device

    def add_batch_hook(self, fn: Callable[..., None]) -> None:
        self._hooks.append(fn)

    def _run_hooks(self, batch_idx: int, output: Any) -> None:
        for fn in self._hooks:
            fn(self.trainer, batch_idx, output)

    def _predict_one(self, module: nn.Module, batch: Any, batch_idx: int) -> Any:
        batch = move_to_device(batch, self.device)
        if hasattr(module, "predict_step"):
            return module.predict_step(batch, batch_idx)
        if isinstance(batch, dict):
            return module(**batch)
        return module(batch)

    def run(self, module: nn.Module, dataloader: Iterable) -> Any:
        self.progress = LoopProgress()
        was_training = module.training
        module.eval()
        self.trainer.callbacks.on_predict_start(self.trainer, module)
        try:
            with torch.inference_mode():
                for batch_idx, batch in enumerate(dataloader):
                    out = self._predict_one(module, batch, batch_idx)
                    self.collector.add(out)
                    self._run_hooks(batch_idx, out)
                    self.progress.batches_seen += 1
                    self.progress.samples_seen += _batch_size(batch)
                    if batch_idx % self.log_every == 0:
                        logger.debug(
                            "predict: batch %d (%.1f samples/s)",
                            batch_idx, self.progress.throughput(),
                        )
        finally:
            module.train(was_training)
        results = self.collector.concatenated()
        self.trainer.callbacks.on_predict_end(self.trainer, module, results)
        logger.info(
            "Prediction finished: %d batches, %d samples",
            self.progress.batches_seen, self.progress.samples_seen,
        )
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
