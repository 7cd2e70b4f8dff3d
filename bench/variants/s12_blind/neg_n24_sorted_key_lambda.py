import heapq
import os
from pathlib import Path

import torch
import torch.nn as nn


class TopKCheckpointer:
    """Keeps the k best checkpoints on disk, ranked by validation loss."""

    def __init__(self, ckpt_dir: str, k: int = 3) -> None:
        self.dir = Path(ckpt_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.k = k
        self.saved: list[tuple[float, str]] = []

    def maybe_save(self, model: nn.Module, val_loss: torch.Tensor, epoch: int) -> None:
        score = float(val_loss)
        path = str(self.dir / f"epoch{epoch:03d}_loss{score:.4f}.pt")
        torch.save(model.state_dict(), path)
        self.saved.append((score, path))
        self.saved = sorted(self.saved, key=lambda t: t[0])
        for _, stale in self.saved[self.k:]:
            os.remove(stale)
        self.saved = self.saved[: self.k]

    @property
    def best_path(self) -> str:
        return min(self.saved, key=lambda t: t[0])[1]


@torch.no_grad()
def hardest_examples(model: nn.Module, loader, n: int = 20) -> list[int]:
    model.eval()
    scored = []
    for ids, x, y in loader:
        losses = nn.functional.cross_entropy(model(x.cuda()), y.cuda(), reduction="none")
        scored.extend(zip(losses.tolist(), ids.tolist()))
    return [i for _, i in heapq.nlargest(n, scored, key=lambda t: t[0])]


def rank_layers_by_grad(model: nn.Module) -> list[str]:
    named = [(n, p) for n, p in model.named_parameters() if p.grad is not None]
    return [n for n, _ in sorted(named, key=lambda np_: np_[1].grad.norm().item(), reverse=True)]
