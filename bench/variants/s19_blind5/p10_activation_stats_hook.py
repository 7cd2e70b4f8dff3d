"""Activation statistics for the hook-based trainer.

``ActivationStatsHook`` attaches forward hooks to selected sub-modules and
reports the RMS of their outputs through the trainer's event storage.  To avoid
a host/device synchronisation on every iteration the statistic is recorded
lazily: the hook stores a thunk, and thunks are only evaluated when a writer
asks for the smoothed value every ``period`` iterations.
"""
from __future__ import annotations

import logging
import re
import statistics
from collections import defaultdict
from typing import Callable, Dict, List, Optional

import torch
from torch import nn

logger = logging.getLogger(__name__)

Thunk = Callable[[], float]


class HookBase:
    trainer: "SimpleTrainer"

    def before_train(self) -> None: ...
    def after_train(self) -> None: ...
    def before_step(self) -> None: ...
    def after_step(self) -> None: ...


class _LazyScalarHistory:
    """Per-name history of deferred scalars."""

    def __init__(self) -> None:
        self._thunks: Dict[str, List[Thunk]] = defaultdict(list)

    def names(self) -> List[str]:
        return list(self._thunks)

    def median(self, name: str, window: int) -> float:
        values = [float(fn()) for fn in self._thunks[name][-window:]]
        return statistics.median(values) if values else float("nan")


class ActivationStatsHook(HookBase):
    def __init__(self, model: nn.Module, pattern: str = r".*(attn|mlp)$", period: int = 20,
                 window: int = 20) -> None:
        self._model = model
        self._regex = re.compile(pattern)
        self._period = period
        self._window = window
        self._history = _LazyScalarHistory()
        self._handles = []

    def _make_forward_hook(self, name: str):
        def _hook(module: nn.Module, inputs, output):
            if isinstance(output, tuple):
                output = output[0]
            self._history._thunks[name].append(lambda: output.float().pow(2).mean().sqrt().item())  # leak
        return _hook

    def before_train(self) -> None:
        for name, module in self._model.named_modules():
            if name and self._regex.match(name):
                self._handles.append(module.register_forward_hook(self._make_forward_hook(name)))
        logger.info("ActivationStatsHook watching %d modules", len(self._handles))

    def after_step(self) -> None:
        it = self.trainer.iter
        if (it + 1) % self._period:
            return
        stats = {f"act_rms/{n}": self._history.median(n, self._window) for n in self._history.names()}
        self.trainer.storage.update(stats)

    def after_train(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()


class SimpleTrainer:
    def __init__(self, model: nn.Module, data_iter, optimizer: torch.optim.Optimizer,
                 hooks: Optional[List[HookBase]] = None) -> None:
        self.model = model
        self._data_iter = data_iter
        self.optimizer = optimizer
        self.iter = 0
        self.storage: Dict[str, float] = {}
        self._hooks: List[HookBase] = []
        for h in hooks or []:
            h.trainer = self
            self._hooks.append(h)

    def run_step(self) -> None:
        inputs, targets = next(self._data_iter)
        preds = self.model(inputs)
        mse = nn.functional.mse_loss(preds, targets)
        self.optimizer.zero_grad()
        mse.backward()
        self.optimizer.step()
        self.storage["loss"] = mse.item()

    def train(self, start_iter: int, max_iter: int) -> None:
        for h in self._hooks:
            h.before_train()
        try:
            for self.iter in range(start_iter, max_iter):
                for h in self._hooks:
                    h.before_step()
                self.run_step()
                for h in self._hooks:
                    h.after_step()
                if self.iter % 100 == 0:
                    logger.info("iter %d %s", self.iter, self.storage)
        finally:
            for h in self._hooks:
                h.after_train()


class _Block(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.attn = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(x)
        return x + self.mlp(x)


def _infinite(batch: int = 32, d: int = 128):
    while True:
        x = torch.randn(batch, d)
        yield x, x.roll(1, dims=-1)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    net = nn.Sequential(*[_Block(128) for _ in range(6)])
    trainer = SimpleTrainer(net, _infinite(), torch.optim.SGD(net.parameters(), lr=1e-3),
                            hooks=[ActivationStatsHook(net, pattern=r"\d+\.(attn|mlp)$")])
    trainer.train(0, 20_000)
