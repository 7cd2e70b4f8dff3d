"""Fixed-size negative-key queue and momentum-encoder helpers (MoCo v2 style)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MemoryQueue(nn.Module):
    """Ring buffer of K normalised keys.

    Keys are written in place at `ptr`, so the buffer never grows; it is a
    registered buffer so it moves with the module and is saved in checkpoints.
    """

    def __init__(self, dim: int, size: int = 16384):
        super().__init__()
        self.size = size
        self.register_buffer("keys", F.normalize(torch.randn(size, dim), dim=1))
        self.register_buffer("ptr", torch.zeros((), dtype=torch.long))

    @torch.no_grad()
    def enqueue(self, k: torch.Tensor) -> None:
        k = k.detach()
        n = k.shape[0]
        p = int(self.ptr)
        if p + n <= self.size:
            self.keys[p:p + n] = k
        else:
            first = self.size - p
            self.keys[p:] = k[:first]
            self.keys[: n - first] = k[first:]
        self.ptr.fill_((p + n) % self.size)

    def negatives(self) -> torch.Tensor:
        return self.keys.clone().detach()


@torch.no_grad()
def momentum_update(online: nn.Module, target: nn.Module, m: float = 0.999) -> None:
    for po, pt in zip(online.parameters(), target.parameters()):
        pt.mul_(m).add_(po.detach(), alpha=1 - m)


def info_nce(q: torch.Tensor, k: torch.Tensor, negatives: torch.Tensor, tau: float = 0.2) -> torch.Tensor:
    pos = (q * k).sum(-1, keepdim=True)
    neg = q @ negatives.t()
    logits = torch.cat([pos, neg], dim=1) / tau
    labels = torch.zeros(q.shape[0], dtype=torch.long, device=q.device)
    return F.cross_entropy(logits, labels)
