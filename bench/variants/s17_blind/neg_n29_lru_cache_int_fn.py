import functools
import math

import torch
import torch.nn as nn


@functools.lru_cache(maxsize=16)
def relative_bucket_ids(q_len: int, k_len: int, num_buckets: int = 32, max_distance: int = 128) -> torch.Tensor:
    ctx = torch.arange(q_len)[:, None]
    mem = torch.arange(k_len)[None, :]
    n = -(mem - ctx)
    half = num_buckets // 2
    ret = (n < 0).long() * half
    n = n.abs()
    max_exact = half // 2
    is_small = n < max_exact
    large = max_exact + (
        torch.log(n.float().clamp(min=1) / max_exact) / math.log(max_distance / max_exact) * (half - max_exact)
    ).long()
    large = large.clamp(max=half - 1)
    return ret + torch.where(is_small, n, large)


class RelPosSelfAttention(nn.Module):
    """Self-attention with T5-style bucketed relative position bias."""

    def __init__(self, dim, heads=8, num_buckets=32, max_distance=128):
        super().__init__()
        self.heads = heads
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.out = nn.Linear(dim, dim)
        self.rel_bias = nn.Embedding(num_buckets, heads)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        ids = relative_bucket_ids(n, n, self.num_buckets, self.max_distance).to(x.device)
        bias = self.rel_bias(ids).permute(2, 0, 1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads) + bias
        y = att.softmax(-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, n, d))


class Encoder(nn.Module):
    def __init__(self, dim=512, depth=6):
        super().__init__()
        self.layers = nn.ModuleList(RelPosSelfAttention(dim) for _ in range(depth))
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(depth))

    def forward(self, x):
        for attn, norm in zip(self.layers, self.norms):
            x = x + attn(norm(x))
        return x
