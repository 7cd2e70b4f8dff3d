"""Trainer that defers expensive host syncs until the end of each logging window."""
import time
from typing import Callable

import torch
import torch.nn as nn


class AsyncLoggingTrainer:
    def __init__(self, model: nn.Module, lr: float = 1e-3, log_every: int = 100) -> None:
        self.model = model.cuda()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.log_every = log_every
        self._post_step_fns: list[Callable[[], None]] = []
        self.step = 0

    def train_step(self, x: torch.Tensor, y: torch.Tensor) -> None:
        out = self.model(x.cuda(non_blocking=True))
        loss = nn.functional.cross_entropy(out, y.cuda(non_blocking=True))
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        step = self.step
        self._post_step_fns.append(lambda: print(f"step {step}: loss {loss.item():.4f}"))  # leak
        self.step += 1

    def flush_logs(self) -> None:
        # only print the latest window to keep stdout small
        for fn in self._post_step_fns[-self.log_every:]:
            fn()

    def fit(self, loader, epochs: int) -> None:
        t0 = time.perf_counter()
        for epoch in range(epochs):
            for x, y in loader:
                self.train_step(x, y)
                if self.step % self.log_every == 0:
                    self.flush_logs()
            print(f"epoch {epoch} took {time.perf_counter() - t0:.1f}s")
            t0 = time.perf_counter()
