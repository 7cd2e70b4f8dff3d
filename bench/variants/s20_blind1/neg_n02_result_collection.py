"""Storage for values logged through ``self.log`` inside a module's step methods.

Logged values are detached on entry: the epoch aggregate is a plain running sum
and must never hold on to the autograd graph of the batches that produced it.

``ResultCollection`` lives on the logger connector, one per running stage. Each
``self.log(name, value)`` call from ``training_step`` ends up in
:meth:`ResultCollection.log`, which forwards to the matching
:class:`ResultMetric` accumulator.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Dict, Optional, Union

import torch
from torch import Tensor

_log = logging.getLogger(__name__)

_VALID_REDUCTIONS = ("mean", "sum")


@dataclass
class _Metadata:
    fx: str
    name: str
    prog_bar: bool = False
    logger: bool = True
    on_step: bool = False
    on_epoch: bool = True
    reduce_fx: str = "mean"

    def __post_init__(self) -> None:
        if self.reduce_fx not in _VALID_REDUCTIONS:
            raise ValueError(f"reduce_fx must be one of {_VALID_REDUCTIONS}, got {self.reduce_fx!r}")

    @property
    def key(self) -> str:
        return f"{self.fx}.{self.name}"


class ResultMetric:
    """Accumulates one logged value across the batches of an epoch."""

    def __init__(self, meta: _Metadata, device: Union[str, torch.device] = "cpu") -> None:
        self.meta = meta
        self.device = device
        self.value: Optional[Tensor] = None
        self.cumulated_batch_size = 0
        self.last: Optional[Tensor] = None

    def update(self, value: Tensor, batch_size: int) -> None:
        if self.meta.on_step:
            self.last = value.detach()
        if not self.meta.on_epoch:
            return
        value = value.detach()
        weighted = value * batch_size if self.meta.reduce_fx == "mean" else value
        self.value = weighted if self.value is None else self.value + weighted
        self.cumulated_batch_size += batch_size

    def compute(self) -> Tensor:
        if self.value is None:
            raise RuntimeError(f"{self.meta.key} was never updated")
        if self.meta.reduce_fx == "mean":
            return self.value / max(self.cumulated_batch_size, 1)
        return self.value

    def reset(self) -> None:
        self.value = None
        self.cumulated_batch_size = 0
        self.last = None


class ResultCollection(Dict[str, ResultMetric]):
    """Dict of ``fx.name -> ResultMetric`` for one stage (train / validate / test)."""

    def __init__(self, training: bool, device: Union[str, torch.device] = "cpu") -> None:
        super().__init__()
        self.training = training
        self.device = device
        self.batch_size: Optional[int] = None

    def log(
        self,
        fx: str,
        name: str,
        value: Union[Tensor, float],
        prog_bar: bool = False,
        logger: bool = True,
        on_step: bool = False,
        on_epoch: bool = True,
        reduce_fx: str = "mean",
        batch_size: Optional[int] = None,
    ) -> None:
        if not isinstance(value, Tensor):
            value = torch.tensor(value, device=self.device, dtype=torch.float)
        meta = _Metadata(fx, name, prog_bar, logger, on_step, on_epoch, reduce_fx)
        if meta.key not in self:
            self[meta.key] = ResultMetric(meta, self.device)
        bs = batch_size or self.batch_size or 1
        self[meta.key].update(value, bs)

    def metrics(self, on_step: bool) -> Dict[str, Dict[str, float]]:
        out: Dict[str, Dict[str, float]] = {"log": {}, "pbar": {}}
        for key, metric in self.items():
            if on_step:
                if metric.last is None:
                    continue
                val = metric.last
            else:
                if metric.value is None:
                    continue
                val = metric.compute().detach()
            name = metric.meta.name + ("_step" if on_step and metric.meta.on_epoch else "")
            if metric.meta.logger:
                out["log"][name] = float(val)
            if metric.meta.prog_bar:
                out["pbar"][name] = float(val)
        return out

    def reset(self) -> None:
        for metric in self.values():
            metric.reset()


class LoggerConnector:
    """Glue between the trainer, the module's ``self.log`` calls and the loggers."""

    def __init__(self, trainer) -> None:
        self.trainer = trainer
        self.train_results = ResultCollection(training=True)
        self.eval_results = ResultCollection(training=False)

    def on_batch_start(self, batch) -> None:
        if isinstance(batch, (list, tuple)) and batch and isinstance(batch[0], Tensor):
            self.train_results.batch_size = batch[0].size(0)

    def update_train_step_metrics(self) -> None:
        metrics = self.train_results.metrics(on_step=True)
        for lg in self.trainer.loggers:
            lg.log_metrics(metrics["log"], step=self.trainer.global_step)

    def update_train_epoch_metrics(self) -> None:
        metrics = self.train_results.metrics(on_step=False)
        for lg in self.trainer.loggers:
            lg.log_metrics(metrics["log"], step=self.trainer.global_step)
        _log.info("epoch %d: %s", self.trainer.current_epoch, metrics["pbar"])
        self.train_results.reset()
