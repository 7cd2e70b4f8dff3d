"""JSON-lines experiment logger backend.

Drop-in backend for the ``Trainer.loggers`` list.  Metrics are buffered and
written every ``flush_every`` calls; at ``finalize`` a run summary with the
min / max / last value of every tag is appended to the file.

The backend does not depend on torch directly: anything with ``__float__``
(python numbers, numpy scalars, 0-d tensors) is accepted as a metric value.
"""
import json
import os
import time
from collections import defaultdict
from typing import Any, Dict, List, Mapping, Optional, Tuple

__all__ = ["LoggerBackend", "JsonlLogger"]


class LoggerBackend:
    """Interface every logger backend implements."""

    def log_hyperparams(self, params: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def log_metrics(self, metrics: Mapping[str, Any], step: int) -> None:
        raise NotImplementedError

    def finalize(self, status: str = "success") -> None:
        pass


def _as_number(value):
    if hasattr(value, "item"):
        return value.item()
    return float(value)


class JsonlLogger(LoggerBackend):
    def __init__(self, save_dir: str, name: str = "default", flush_every: int = 20) -> None:
        os.makedirs(save_dir, exist_ok=True)
        self._path = os.path.join(save_dir, f"{name}.jsonl")
        self._flush_every = flush_every
        self._pending: List[Dict[str, Any]] = []
        self._history: Dict[str, List[Tuple[int, Any]]] = defaultdict(list)
        self._start = time.time()

    @property
    def path(self) -> str:
        return self._path

    def log_hyperparams(self, params: Mapping[str, Any]) -> None:
        with open(self._path, "a") as fh:
            fh.write(json.dumps({"type": "hparams", **{k: str(v) for k, v in params.items()}}) + "\n")

    def log_metrics(self, metrics: Mapping[str, Any], step: int) -> None:
        record = {"type": "metrics", "step": step, "time": time.time() - self._start}
        for tag, value in metrics.items():
            record[tag] = _as_number(value)
            self._history[tag].append((step, value))  # leak
        self._pending.append(record)
        if len(self._pending) >= self._flush_every:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        with open(self._path, "a") as fh:
            for rec in self._pending:
                fh.write(json.dumps(rec) + "\n")
        self._pending.clear()

    def _summary(self) -> Dict[str, Dict[str, float]]:
        out = {}
        for tag, points in self._history.items():
            values = [_as_number(v) for _, v in points]
            out[tag] = {"min": min(values), "max": max(values), "last": values[-1], "n": len(values)}
        return out

    def finalize(self, status: str = "success") -> None:
        self._flush()
        with open(self._path, "a") as fh:
            fh.write(json.dumps({"type": "summary", "status": status, "tags": self._summary()}) + "\n")


class _LoggerConnector:
    """What the trainer uses to route ``self.log`` calls to every backend."""

    def __init__(self, backends: List[LoggerBackend], log_every_n_steps: int = 1) -> None:
        self.backends = backends
        self.log_every_n_steps = log_every_n_steps

    def log(self, metrics: Mapping[str, Any], step: int) -> None:
        if step % self.log_every_n_steps:
            return
        for backend in self.backends:
            backend.log_metrics(metrics, step)

    def teardown(self, status: str = "success") -> None:
        for backend in self.backends:
            backend.finalize(status)


def _demo(save_dir: Optional[str] = None) -> None:
    import torch
    from torch import nn

    net = nn.Linear(10, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    connector = _LoggerConnector([JsonlLogger(save_dir or "logs", "demo")])
    for step in range(1000):
        x = torch.randn(64, 10)
        y = x.sum(dim=1, keepdim=True)
        mse = nn.functional.mse_loss(net(x), y)
        opt.zero_grad()
        mse.backward()
        opt.step()
        connector.log({"train/mse": mse.detach(), "train/w_norm": net.weight.detach().norm()}, step)
    connector.teardown()


if __name__ == "__main__":
    _demo()
