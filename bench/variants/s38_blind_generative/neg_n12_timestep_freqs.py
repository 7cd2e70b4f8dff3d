"""Conditioning embeddings (timestep, class, guidance scale) for the DiT-style denoiser."""
import functools
import math
from typing import Optional

import torch
import torch.nn as nn


@functools.lru_cache(maxsize=16)
def _frequency_table(half: int, max_period: int, device_str: str) -> torch.Tensor:
    exponent = -math.log(max_period) * torch.arange(half, dtype=torch.float32) / half
    return torch.exp(exponent).to(device_str)


def timestep_embedding(t: torch.Tensor, dim: int, max_period: int = 10000) -> torch.Tensor:
    half = dim // 2
    freqs = _frequency_table(half, max_period, str(t.device))
    args = t.float()[:, None] * freqs[None]
    emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if dim % 2:
        emb = torch.cat([emb, torch.zeros_like(emb[:, :1])], dim=-1)
    return emb


class TimestepEmbedder(nn.Module):
    def __init__(self, hidden: int, freq_dim: int = 256):
        super().__init__()
        self.freq_dim = freq_dim
        self.mlp = nn.Sequential(nn.Linear(freq_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return self.mlp(timestep_embedding(t, self.freq_dim))


class LabelEmbedder(nn.Module):
    """Class embedding with an extra 'null' row used for classifier-free guidance dropout."""

    def __init__(self, num_classes: int, hidden: int, dropout_prob: float = 0.1):
        super().__init__()
        self.table = nn.Embedding(num_classes + 1, hidden)
        self.num_classes = num_classes
        self.dropout_prob = dropout_prob

    def forward(self, labels: torch.Tensor, force_drop: Optional[torch.Tensor] = None) -> torch.Tensor:
        if self.training and self.dropout_prob > 0:
            drop = torch.rand(labels.shape, device=labels.device) < self.dropout_prob
        else:
            drop = torch.zeros_like(labels, dtype=torch.bool)
        if force_drop is not None:
            drop = drop | force_drop.bool()
        labels = torch.where(drop, torch.full_like(labels, self.num_classes), labels)
        return self.table(labels)


class ConditioningEmbedder(nn.Module):
    def __init__(self, hidden: int, num_classes: int, cfg_dropout: float = 0.1):
        super().__init__()
        self.t_embed = TimestepEmbedder(hidden)
        self.y_embed = LabelEmbedder(num_classes, hidden, cfg_dropout)
        self.g_embed = TimestepEmbedder(hidden, freq_dim=64)

    def forward(self, t, y, guidance: Optional[torch.Tensor] = None, force_drop=None):
        c = self.t_embed(t) + self.y_embed(y, force_drop)
        if guidance is not None:
            c = c + self.g_embed(guidance * 1000.0)
        return c


@torch.no_grad()
def cfg_denoise(model: nn.Module, x: torch.Tensor, t: torch.Tensor, y: torch.Tensor, scale: float):
    x_in = torch.cat([x, x])
    t_in = torch.cat([t, t])
    y_in = torch.cat([y, y])
    drop = torch.cat([torch.zeros_like(y), torch.ones_like(y)])
    out = model(x_in, t_in, y_in, force_drop=drop)
    cond, uncond = out.chunk(2)
    return uncond + scale * (cond - uncond)


if __name__ == "__main__":
    emb = ConditioningEmbedder(hidden=384, num_classes=1000)
    t = torch.randint(0, 1000, (8,))
    y = torch.randint(0, 1000, (8,))
    print(emb(t, y).shape, _frequency_table.cache_info())
