"""Callback machinery for the lightweight trainer loop.

The trainer owns a :class:`CallbackHandler` which fans events out to a list of
:class:`TrainerCallback` objects.  Gradient statistics are kept in a sliding
window so that long runs do not accumulate per-step state.
"""
from __future__ import annotations

import logging
import math
import statistics
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Deque, Dict, Iterable, List, Optional

import torch
from torch import nn

logger = logging.getLogger(__name__)


@dataclass
class TrainerState:
    global_step: int = 0
    epoch: int = 0
    log_history: List[Dict[str, float]] = field(default_factory=list)


class TrainerCallback:
    def on_train_begin(self, state: TrainerState, **kwargs: Any) -> None: ...
    def on_step_begin(self, state: TrainerState, **kwargs: Any) -> None: ...
    def on_after_backward(self, state: TrainerState, **kwargs: Any) -> None: ...
    def on_step_end(self, state: TrainerState, **kwargs: Any) -> None: ...
    def on_epoch_end(self, state: TrainerState, **kwargs: Any) -> None: ...
    def on_train_end(self, state: TrainerState, **kwargs: Any) -> None: ...


class CallbackHandler:
    def __init__(self, callbacks: Optional[Iterable[TrainerCallback]] = None) -> None:
        self._callbacks: List[TrainerCallback] = list(callbacks or [])

    def __call__(self, event: str, state: TrainerState, **kwargs: Any) -> None:
        for cb in self._callbacks:
            getattr(cb, event)(state, **kwargs)


def _global_grad_norm(parameters: Iterable[nn.Parameter], norm_type: float = 2.0) -> torch.Tensor:
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.zeros(())
    per_param = torch.stack([torch.linalg.vector_norm(g.detach(), norm_type) for g in grads])
    return torch.linalg.vector_norm(per_param, norm_type)


class GradNormMonitor(TrainerCallback):
    """Tracks the global gradient norm over a sliding window of steps.

    Values are converted to Python floats before being stored and the window is
    cleared at every epoch boundary after the epoch summary is logged.
    """

    def __init__(self, window: int = 256, spike_factor: float = 5.0) -> None:
        self.spike_factor = spike_factor
        self._norms: Deque[float] = deque(maxlen=window)
        self._spikes = 0

    def on_after_backward(self, state: TrainerState, model: nn.Module = None, **kwargs: Any) -> None:
        total_norm = _global_grad_norm(model.parameters()).item()
        if len(self._norms) >= 8 and total_norm > self.spike_factor * statistics.median(self._norms):
            self._spikes += 1
        self._norms.append(total_norm)

    def on_epoch_end(self, state: TrainerState, **kwargs: Any) -> None:
        if self._norms:
            logger.info(
                "epoch %d grad-norm: mean=%.4f max=%.4f spikes=%d",
                state.epoch, statistics.fmean(self._norms), max(self._norms), self._spikes,
            )
        self._norms.clear()
        self._spikes = 0


class LossLogger(TrainerCallback):
    def __init__(self, every: int = 50) -> None:
        self.every = every

    def on_step_end(self, state: TrainerState, loss_value: float = math.nan, **kwargs: Any) -> None:
        if state.global_step % self.every == 0:
            state.log_history.append({"step": state.global_step, "loss": loss_value})


class MiniTrainer:
    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer,
                 callbacks: Optional[List[TrainerCallback]] = None, max_grad_norm: float = 1.0) -> None:
        self.model = model
        self.optimizer = optimizer
        self.max_grad_norm = max_grad_norm
        self.state = TrainerState()
        self.callback_handler = CallbackHandler(callbacks)

    def _compute_loss(self, batch: Dict[str, torch.Tensor]) -> torch.Tensor:
        logits = self.model(batch["input"])
        return nn.functional.cross_entropy(logits, batch["label"])

    def _training_step(self, batch: Dict[str, torch.Tensor]) -> float:
        self.model.train()
        objective = self._compute_loss(batch)
        objective.backward()
        self.callback_handler("on_after_backward", self.state, model=self.model)
        if self.max_grad_norm:
            nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return objective.item()

    def train(self, loader: Iterable[Dict[str, torch.Tensor]], epochs: int = 1) -> TrainerState:
        self.callback_handler("on_train_begin", self.state)
        for epoch in range(epochs):
            self.state.epoch = epoch
            for batch in loader:
                self.callback_handler("on_step_begin", self.state)
                value = self._training_step(batch)
                self.state.global_step += 1
                self.callback_handler("on_step_end", self.state, loss_value=value)
            self.callback_handler("on_epoch_end", self.state)
        self.callback_handler("on_train_end", self.state)
        return self.state


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    data = [{"input": torch.randn(16, 32), "label": torch.randint(0, 4, (16,))} for _ in range(200)]
    MiniTrainer(net, opt, callbacks=[GradNormMonitor(), LossLogger()]).train(data, epochs=3)
