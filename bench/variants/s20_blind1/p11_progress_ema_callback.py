"""Minimal callback-driven runner with a tqdm progress reporter.

This is the small engine used by the research scripts in ``experiments/``;
anything fancier goes through the full trainer.
"""
from __future__ import annotations

import argparse
import logging
import math
from dataclasses import dataclass, field
from typing import Any, List, Optional

import torch
from tqdm.auto import tqdm

log = logging.getLogger(__name__)


@dataclass
class RunState:
    epoch: int = 0
    step: int = 0
    batch_idx: int = 0
    num_batches: int = 0
    loss: Optional[torch.Tensor] = None
    extras: dict = field(default_factory=dict)
    should_stop: bool = False


class Callback:
    def on_epoch_start(self, state: RunState) -> None: ...
    def on_batch_end(self, state: RunState) -> None: ...
    def on_epoch_end(self, state: RunState) -> None: ...


class ProgressReporter(Callback):
    """Shows an exponentially smoothed loss in the progress bar."""

    def __init__(self, beta: float = 0.98, refresh_every: int = 10) -> None:
        self.beta = beta
        self.refresh_every = refresh_every
        self._bar = None
        self._smoothed = None
        self._n = 0

    def on_epoch_start(self, state: RunState) -> None:
        self._bar = tqdm(total=state.num_batches, desc=f"epoch {state.epoch}", leave=False, dynamic_ncols=True)

    def on_batch_end(self, state: RunState) -> None:
        value = state.loss
        if value is None:
            return
        self._n += 1
        if self._smoothed is None:
            self._smoothed = value
        else:
            self._smoothed = self.beta * self._smoothed + (1.0 - self.beta) * value  # leak
        self._bar.update(1)
        if state.batch_idx % self.refresh_every == 0:
            debiased = float(self._smoothed) / (1.0 - self.beta ** self._n)
            postfix = {"loss": f"{debiased:.4f}"}
            postfix.update({k: f"{v:.3g}" for k, v in state.extras.items()})
            self._bar.set_postfix(postfix)

    def on_epoch_end(self, state: RunState) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class DivergenceStop(Callback):
    def on_batch_end(self, state: RunState) -> None:
        if state.loss is not None and not math.isfinite(state.loss.item()):
            log.error("non-finite loss at step %d, stopping", state.step)
            state.should_stop = True


class Runner:
    def __init__(self, model, optimizer, loss_fn, callbacks: List[Callback], device: str = "cuda") -> None:
        self.model = model.to(device)
        self.optimizer = optimizer
        self.loss_fn = loss_fn
        self.callbacks = callbacks
        self.device = device
        self.state = RunState()

    def _emit(self, name: str) -> None:
        for cb in self.callbacks:
            getattr(cb, name)(self.state)

    def _step(self, batch: Any) -> torch.Tensor:
        x, y = (t.to(self.device, non_blocking=True) for t in batch)
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss_fn(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss

    def fit(self, loader, epochs: int) -> None:
        self.model.train()
        for epoch in range(epochs):
            self.state.epoch = epoch
            self.state.num_batches = len(loader)
            self._emit("on_epoch_start")
            for i, batch in enumerate(loader):
                self.state.batch_idx = i
                self.state.loss = self._step(batch)
                self.state.extras["lr"] = self.optimizer.param_groups[0]["lr"]
                self.state.step += 1
                self._emit("on_batch_end")
                if self.state.should_stop:
                    break
            self._emit("on_epoch_end")
            if self.state.should_stop:
                break


def add_runner_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--ema-beta", type=float, default=0.98)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return parser
