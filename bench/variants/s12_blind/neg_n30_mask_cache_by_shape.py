"""Sliding-window attention with a per-shape mask cache."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SlidingWindowAttention(nn.Module):
    def __init__(self, dim: int, n_heads: int, window: int = 256) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.window = window
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self._mask_cache: dict[tuple[int, torch.device], torch.Tensor] = {}

    def _mask(self, T: int, device: torch.device) -> torch.Tensor:
        key = (T, device)
        if (mask := self._mask_cache.get(key)) is None:
            i = torch.arange(T, device=device)
            mask = (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < self.window)
            self._mask_cache[key] = mask
        return mask

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, C // self.n_heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self._mask(T, x.device))
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class LM(nn.Module):
    def __init__(self, vocab: int = 50257, dim: int = 512, depth: int = 8, seq_len: int = 1024) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(SlidingWindowAttention(dim, 8) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.seq_len = seq_len

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.emb(idx[:, -self.seq_len:])
        for layer in self.layers:
            x = x + layer(x)
        return self.head(self.norm(x))
