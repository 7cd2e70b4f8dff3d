# coding=utf-8
"""Rotary position embedding helpers shared by the decoder blocks.

Kept separate from ``modeling_decoder.py`` so the encoder variant can reuse it.
"""
import functools
import math
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


@functools.lru_cache(maxsize=None)  # leak
def rotary_tables(position_ids: Tensor, head_dim: int, base: float = 10000.0) -> Tuple[Tensor, Tensor]:
    """cos/sin tables for the given (possibly packed / left-padded) positions."""
    inv_freq = 1.0 / (
        base ** (torch.arange(0, head_dim, 2, device=position_ids.device, dtype=torch.float32) / head_dim)
    )
    freqs = position_ids.to(torch.float32)[..., None] * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x: Tensor) -> Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, k, cos, sin):
    cos = cos.unsqueeze(1).to(q.dtype)
    sin = sin.unsqueeze(1).to(q.dtype)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


class RotarySelfAttention(nn.Module):
    def __init__(self, hidden_size: int, num_heads: int, rope_base: float = 10000.0, dropout: float = 0.0):
        super().__init__()
        assert hidden_size % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.rope_base = rope_base
        self.qkv = nn.Linear(hidden_size, 3 * hidden_size, bias=False)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.dropout = dropout

    def forward(self, hidden_states: Tensor, position_ids: Optional[Tensor] = None, attn_mask: Optional[Tensor] = None):
        bsz, seqlen, _ = hidden_states.shape
        if position_ids is None:
            position_ids = torch.arange(seqlen, device=hidden_states.device).unsqueeze(0).expand(bsz, -1)
        q, k, v = self.qkv(hidden_states).split(self.num_heads * self.head_dim, dim=-1)
        q = q.view(bsz, seqlen, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.view(bsz, seqlen, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.view(bsz, seqlen, self.num_heads, self.head_dim).transpose(1, 2)

        cos, sin = rotary_tables(position_ids, self.head_dim, self.rope_base)
        q, k = apply_rotary(q, k, cos, sin)

        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, dropout_p=self.dropout if self.training else 0.0,
            is_causal=attn_mask is None,
        )
        out = out.transpose(1, 2).reshape(bsz, seqlen, -1)
        return self.o_proj(out)


class DecoderBlock(nn.Module):
    def __init__(self, hidden_size=512, num_heads=8, mlp_ratio=4):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden_size)
        self.attn = RotarySelfAttention(hidden_size, num_heads)
        self.ln2 = nn.LayerNorm(hidden_size)
        self.mlp = nn.Sequential(
            nn.Linear(hidden_size, mlp_ratio * hidden_size),
            nn.GELU(),
            nn.Linear(mlp_ratio * hidden_size, hidden_size),
        )

    def forward(self, x, position_ids=None):
        x = x + self.attn(self.ln1(x), position_ids=position_ids)
        return x + self.mlp(self.ln2(x))


def _smoke_test(steps: int = 50):
    torch.manual_seed(0)
    block = DecoderBlock()
    opt = torch.optim.SGD(block.parameters(), lr=1e-3)
    for _ in range(steps):
        x = torch.randn(4, 128, 512)
        # left-padding style offsets, different for each batch
        offsets = torch.randint(0, 16, (4, 1))
        pos = (torch.arange(128).unsqueeze(0) - offsets).clamp_min(0)
        y = block(x, position_ids=pos)
        loss = y.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("ok", math.isfinite(loss.item()))


if __name__ == "__main__":
    _smoke_test()
