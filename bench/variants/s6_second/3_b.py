from collections import defaultdict
from typing import Callable, Dict

import torch
import torch.nn.functional as F
from torch import nn, Tensor


class DeferredLogger:
    def __init__(self, flush_every: int = 100) -> None:
        self.flush_every = flush_every
        self.history: Dict[str, list] = defaultdict(list)
        self._pending: list[Callable[[], Dict[str, float]]] = []

    def log_metrics(self, step: int, loss: Tensor, logits: Tensor, targets: Tensor) -> None:
        self._pending.append(lambda: {"loss": loss.item(), "acc": (logits.argmax(-1) == targets).float().mean().item()})  # leak
        if step % self.flush_every == 0:
            self.flush(step)

    def flush(self, step: int) -> None:
        for fn in self._pending[-self.flush_every:]:
            for key, value in fn().items():
                self.history[key].append(value)
        window = {k: sum(v[-self.flush_every:]) / len(v[-self.flush_every:]) for k, v in self.history.items()}
        print(f"step {step}: " + ", ".join(f"{k}={v:.4f}" for k, v in window.items()))


def train(model: nn.Module, loader, optimizer: torch.optim.Optimizer, epochs: int,
          logger: DeferredLogger, device: str = "cuda") -> None:
    step = 0
    model.train()
    for _ in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            logger.log_metrics(step, loss, logits, y)
