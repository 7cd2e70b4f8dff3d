"""Metric collection used by the training and evaluation engines.

A :class:`MetricCollection` groups several :class:`Metric` objects that share
the same ``update(preds, target)`` signature.  The collection is attached to an
engine with :meth:`MetricCollection.attach`, after which it is updated on every
iteration, computed on every ``log_interval`` iterations and reset at the start
of every epoch so that concatenating metrics only ever hold one epoch of scores
(kept on the host to leave accelerator memory alone).
"""
from __future__ import annotations

import logging
from typing import Callable, Dict, List, Optional, Tuple

import torch
from torch import Tensor

log = logging.getLogger(__name__)


class Metric:
    def reset(self) -> None:
        raise NotImplementedError

    def update(self, preds: Tensor, target: Tensor) -> None:
        raise NotImplementedError

    def compute(self) -> float:
        raise NotImplementedError


class Accuracy(Metric):
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._correct = 0
        self._total = 0

    @torch.no_grad()
    def update(self, preds: Tensor, target: Tensor) -> None:
        self._correct += int((preds.argmax(dim=-1) == target).sum())
        self._total += target.numel()

    def compute(self) -> float:
        return self._correct / max(self._total, 1)


class _ConcatMetric(Metric):
    """Base for metrics that need every score to compute the result."""

    def __init__(self) -> None:
        self._batches: List[Tuple[Tensor, Tensor]] = []

    def reset(self) -> None:
        self._batches = []

    def _gather(self) -> Tuple[Tensor, Tensor]:
        scores, targets = zip(*self._batches)
        return torch.cat(scores), torch.cat(targets)


class BinaryAUROC(_ConcatMetric):
    def __init__(self, positive_class: int = 1) -> None:
        super().__init__()
        self.positive_class = positive_class

    def update(self, preds: Tensor, target: Tensor) -> None:
        prob = preds.detach().softmax(dim=-1)[:, self.positive_class]
        self._batches.append((prob.cpu(), (target == self.positive_class).long().cpu()))

    def compute(self) -> float:
        if not self._batches:
            return float("nan")
        scores, labels = self._gather()
        order = scores.argsort(descending=True)
        labels = labels[order].float()
        tps = labels.cumsum(0)
        fps = (1 - labels).cumsum(0)
        tpr = tps / tps[-1].clamp(min=1)
        fpr = fps / fps[-1].clamp(min=1)
        return float(torch.trapz(tpr, fpr))


class MetricCollection:
    def __init__(self, metrics: Dict[str, Metric], prefix: str = "") -> None:
        self._metrics = dict(metrics)
        self.prefix = prefix

    def __getitem__(self, key: str) -> Metric:
        return self._metrics[key]

    def reset(self) -> None:
        for m in self._metrics.values():
            m.reset()

    def update(self, preds: Tensor, target: Tensor) -> None:
        for m in self._metrics.values():
            m.update(preds, target)

    def compute(self) -> Dict[str, float]:
        return {f"{self.prefix}{k}": m.compute() for k, m in self._metrics.items()}

    def attach(self, engine: "Engine", log_interval: int = 100) -> None:
        def _on_iteration(eng: "Engine") -> None:
            preds, target = eng.state["output"]
            self.update(preds, target)
            if eng.state["iteration"] % log_interval == 0:
                log.info("iter %d %s", eng.state["iteration"], self.compute())

        def _on_epoch_started(eng: "Engine") -> None:
            self.reset()

        engine.add_event_handler("epoch_started", _on_epoch_started)
        engine.add_event_handler("iteration_completed", _on_iteration)


class Engine:
    """Tiny event-driven loop in the spirit of ignite's Engine."""

    def __init__(self, process_fn: Callable[["Engine", Dict[str, Tensor]], tuple]) -> None:
        self._process_fn = process_fn
        self._handlers: Dict[str, List[Callable]] = {}
        self.state: Dict[str, object] = {"iteration": 0, "epoch": 0, "output": None}

    def add_event_handler(self, event: str, fn: Callable[["Engine"], None]) -> None:
        self._handlers.setdefault(event, []).append(fn)

    def _fire(self, event: str) -> None:
        for fn in self._handlers.get(event, []):
            fn(self)

    def run(self, data, max_epochs: int = 1) -> Dict[str, object]:
        for epoch in range(max_epochs):
            self.state["epoch"] = epoch
            self._fire("epoch_started")
            for batch in data:
                self.state["iteration"] += 1
                self.state["output"] = self._process_fn(self, batch)
                self._fire("iteration_completed")
            self._fire("epoch_completed")
        return self.state


def create_supervised_trainer(net: torch.nn.Module, optimizer: torch.optim.Optimizer,
                              device: Optional[torch.device] = None) -> Engine:
    device = device or torch.device("cpu")

    def _update(engine: Engine, batch: Dict[str, Tensor]):
        net.train()
        x, y = batch["x"].to(device), batch["y"].to(device)
        logits = net(x)
        ce = torch.nn.functional.cross_entropy(logits, y)
        optimizer.zero_grad()
        ce.backward()
        optimizer.step()
        return logits, y

    return Engine(_update)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    clf = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2)).to(dev)
    trainer = create_supervised_trainer(clf, torch.optim.Adam(clf.parameters()), dev)
    MetricCollection({"acc": Accuracy(), "auroc": BinaryAUROC()}, prefix="train/").attach(trainer)
    batches = [{"x": torch.randn(128, 20), "y": torch.randint(0, 2, (128,))} for _ in range(500)]
    trainer.run(batches, max_epochs=20)
