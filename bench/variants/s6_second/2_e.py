from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn, Tensor


@dataclass
class Snapshot:
    step: int
    hidden: Tensor
    norm: float


class ResidualMLP(nn.Module):
    def __init__(self, in_dim: int, dim: int, out_dim: int, depth: int, log_every: int = 100):
        super().__init__()
        self.inp = nn.Linear(in_dim, dim)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.SiLU()) for _ in range(depth)
        )
        self.out = nn.Linear(dim, out_dim)
        self.log_every = log_every
        self.snapshots: list[Snapshot] = []
        self._step = 0

    def _record(self, h: Tensor) -> None:
        self._step += 1
        if self._step % self.log_every == 0:
            self.snapshots.append(Snapshot(self._step, h, h.norm(dim=-1).mean().item()))  # leak

    def forward(self, x: Tensor) -> Tensor:
        h = self.inp(x)
        for block in self.blocks:
            h = h + block(h)
        if self.training:
            self._record(h)
        return self.out(h)


def fit(model: ResidualMLP, loader, optimizer: torch.optim.Optimizer, epochs: int) -> None:
    model.train()
    for epoch in range(epochs):
        for x, y in loader:
            loss = F.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if model.snapshots:
            print(f"epoch {epoch}: hidden norm {model.snapshots[-1].norm:.3f}")
