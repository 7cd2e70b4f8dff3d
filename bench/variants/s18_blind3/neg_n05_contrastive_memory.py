"""Negative-key memory for momentum contrastive learning (MoCo-style)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.no_grad()
def concat_all_gather(t):
    if not torch.distributed.is_available() or not torch.distributed.is_initialized():
        return t
    out = [torch.empty_like(t) for _ in range(torch.distributed.get_world_size())]
    torch.distributed.all_gather(out, t, async_op=False)
    return torch.cat(out, dim=0)


class KeyMemory(nn.Module):
    """Fixed-size ring buffer holding the most recent ``size`` keys."""

    def __init__(self, dim, size=65536, temperature=0.07):
        super().__init__()
        self.dim = dim
        self.size = size
        self.temperature = temperature
        self.register_buffer("queue", F.normalize(torch.randn(size, dim).div_(math.sqrt(dim)), dim=1))
        self.register_buffer("ptr", torch.zeros(1, dtype=torch.long))

    def negatives(self):
        return self.queue.clone().detach()

    @torch.no_grad()
    def push(self, keys):
        keys = concat_all_gather(keys)
        n = keys.shape[0]
        p = int(self.ptr)
        assert self.size % n == 0, "queue size must be divisible by batch size"
        self.queue[p:p + n] = keys
        self.ptr[0] = (p + n) % self.size

    def logits(self, q, k):
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,kc->nk", q, self.negatives().to(q.dtype))
        return torch.cat([l_pos, l_neg], dim=1) / self.temperature


class MoCo(nn.Module):
    def __init__(self, encoder_q, encoder_k, dim=128, K=65536, m=0.999, T=0.07):
        super().__init__()
        self.m = m
        self.encoder_q = encoder_q
        self.encoder_k = encoder_k
        for p_q, p_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            p_k.data.copy_(p_q.data)
            p_k.requires_grad = False
        self.memory = KeyMemory(dim, K, T)

    @torch.no_grad()
    def _momentum_update(self):
        for p_q, p_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            p_k.data.mul_(self.m).add_(p_q.data, alpha=1.0 - self.m)

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        logits = self.memory.logits(q, k)
        labels = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)
        self.memory.push(k)
        return logits, labels
