from __future__ import annotations

import json
import numbers
from collections import defaultdict
from typing import ClassVar

import torch


class ScalarLogger:
    """Process-wide scalar logger; stores plain python numbers only."""

    _history: ClassVar[dict[str, list[float]]] = defaultdict(list)

    def __init__(self, run_name: str, flush_every: int = 1000) -> None:
        self.run_name = run_name
        self.flush_every = flush_every
        self.step = 0

    @staticmethod
    def _to_float(value) -> float:
        match value:
            case torch.Tensor() if value.numel() == 1:
                return value.detach().item()
            case torch.Tensor():
                return value.detach().float().mean().item()
            case numbers.Number():
                return float(value)
            case _:
                raise TypeError(f"cannot log {type(value)!r}")

    def log(self, name: str, value: torch.Tensor | float) -> None:
        ScalarLogger._history[name].append(self._to_float(value))
        self.step += 1
        if self.step % self.flush_every == 0:
            self.flush()

    def flush(self) -> None:
        latest = {k: v[-1] for k, v in self._history.items() if v}
        with open(f"{self.run_name}.jsonl", "a") as f:
            f.write(json.dumps({"step": self.step, **latest}) + "\n")


def run(model, loader, optimizer, epochs: int = 10) -> None:
    logger = ScalarLogger("exp42")
    for _ in range(epochs):
        for x, y in loader:
            out = model(x.cuda())
            loss = torch.nn.functional.smooth_l1_loss(out, y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            logger.log("train/loss", loss)
            logger.log("train/pred_mean", out)
