"""Training epoch loop.

The :class:`TrainingEpochLoop` is driven by the fit loop, which calls :meth:`run`
once per epoch. Every call to :meth:`advance` consumes exactly one batch, runs the
optimization closure and dispatches the batch-level hooks.

Outputs handed to ``training_epoch_end`` are detached and only kept for the
current epoch.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional

import torch
from torch import Tensor

log = logging.getLogger(__name__)

STEP_OUTPUT = Dict[str, Any]


def _normalize_step_output(output: Any) -> Optional[STEP_OUTPUT]:
    if output is None:
        return None
    if isinstance(output, Tensor):
        return {"loss": output}
    if isinstance(output, dict):
        if "loss" not in output:
            raise RuntimeError("`training_step` returned a dict without a 'loss' key")
        return output
    raise TypeError(f"Unsupported `training_step` output type: {type(output).__name__}")


def _recursive_detach(obj: Any) -> Any:
    """Detach every tensor in a (possibly nested) collection."""
    if isinstance(obj, Tensor):
        return obj.detach()
    if isinstance(obj, dict):
        return {k: _recursive_detach(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_recursive_detach(v) for v in obj)
    return obj


def _prefetch(iterable: Iterable) -> Iterator:
    it = iter(iterable)
    try:
        prev = next(it)
    except StopIteration:
        return
    for nxt in it:
        yield prev, False
        prev = nxt
    yield prev, True


@dataclass
class _BatchProgress:
    ready: int = 0
    completed: int = 0
    is_last_batch: bool = False
    timings: List[float] = field(default_factory=list)

    def reset_on_run(self) -> None:
        self.ready = 0
        self.completed = 0
        self.is_last_batch = False
        self.timings.clear()


class TrainingEpochLoop:
    """Runs over all batches of one epoch."""

    def __init__(self, trainer, max_steps: int = -1, log_every_n_steps: int = 50) -> None:
        self.trainer = trainer
        self.max_steps = max_steps
        self.log_every_n_steps = log_every_n_steps
        self.batch_progress = _BatchProgress()
        self.global_step = 0
        self._fetcher: Optional[Iterator] = None
        self._outputs: List[STEP_OUTPUT] = []

    @property
    def done(self) -> bool:
        if 0 < self.max_steps <= self.global_step:
            return True
        return self.batch_progress.is_last_batch and self.batch_progress.completed == self.batch_progress.ready

    def _module_wants_outputs(self) -> bool:
        module = self.trainer.lightning_module
        return callable(getattr(type(module), "training_epoch_end", None))

    def on_run_start(self, dataloader: Iterable) -> None:
        self.batch_progress.reset_on_run()
        self._outputs = []
        self._fetcher = _prefetch(dataloader)

    def run(self, dataloader: Iterable) -> None:
        self.on_run_start(dataloader)
        while not self.done:
            try:
                self.advance()
            except StopIteration:
                break
        self.on_run_end()

    def advance(self) -> None:
        batch, is_last = next(self._fetcher)
        self.batch_progress.is_last_batch = is_last
        self.batch_progress.ready += 1
        batch_idx = self.batch_progress.ready - 1

        trainer = self.trainer
        trainer.call_hook("on_train_batch_start", batch, batch_idx)

        t0 = time.perf_counter()
        step_output = self._optimization_step(batch, batch_idx)
        self.batch_progress.timings.append(time.perf_counter() - t0)

        if step_output is not None and self._module_wants_outputs():
            self._outputs.append(_recursive_detach(step_output))

        trainer.call_hook("on_train_batch_end", step_output, batch, batch_idx)
        self.batch_progress.completed += 1
        self.global_step += 1

        if self.global_step % self.log_every_n_steps == 0 and step_output is not None:
            log.debug("step %d loss=%.4f", self.global_step, step_output["loss"].item())

    def _optimization_step(self, batch: Any, batch_idx: int) -> Optional[STEP_OUTPUT]:
        module = self.trainer.lightning_module
        optimizer = self.trainer.optimizers[0]
        optimizer.zero_grad(set_to_none=True)

        output = _normalize_step_output(module.training_step(batch, batch_idx))
        if output is None:
            return None

        output["loss"].backward()
        if self.trainer.gradient_clip_val:
            torch.nn.utils.clip_grad_norm_(module.parameters(), self.trainer.gradient_clip_val)
        optimizer.step()
        return output

    def on_run_end(self) -> None:
        if self._module_wants_outputs():
            outputs, self._outputs = self._outputs, []
            self.trainer.lightning_module.training_epoch_end(outputs)
        mean_t = sum(self.batch_progress.timings) / max(len(self.batch_progress.timings), 1)
        log.info("epoch done: %d batches, %.3fs/batch", self.batch_progress.completed, mean_t)
