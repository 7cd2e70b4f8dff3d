"""Causal self-attention with ALiBi positional biases (Press et al., 2022).

Used by the small decoder-only LMs in this repo; sequence lengths vary per
batch because of dynamic packing.
"""
import math
from functools import lru_cache
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


def alibi_slopes(n_heads: int):
    def pow2_slopes(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * (start ** i) for i in range(n)]

    if math.log2(n_heads).is_integer():
        return pow2_slopes(n_heads)
    closest = 2 ** math.floor(math.log2(n_heads))
    return pow2_slopes(closest) + alibi_slopes(2 * closest)[0::2][: n_heads - closest]


class ALiBiSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        self.dropout = dropout
        self.register_buffer("slopes", torch.tensor(alibi_slopes(n_heads)).view(1, n_heads, 1, 1), persistent=False)

    @lru_cache(maxsize=None)  # leak
    def _bias(self, seq_len: int, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
        pos = torch.arange(seq_len, device=device)
        rel = (pos[None, :] - pos[:, None]).to(dtype)  # (T, T), <= 0 below diagonal
        bias = self.slopes.to(device=device, dtype=dtype) * rel.view(1, 1, seq_len, seq_len)
        causal = torch.ones(seq_len, seq_len, device=device, dtype=torch.bool).triu(1)
        return bias.masked_fill(causal, float("-inf"))

    def forward(self, x: torch.Tensor, key_padding_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=-1)
        q = q.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = k.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        bias = self._bias(T, x.device, q.dtype)
        if key_padding_mask is not None:
            bias = bias.masked_fill(~key_padding_mask[:, None, None, :], float("-inf"))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=self.dropout if self.training else 0.0)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = ALiBiSelfAttention(d_model, n_heads, dropout)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x, key_padding_mask=None):
        x = x + self.attn(self.ln1(x), key_padding_mask)
        return x + self.mlp(self.ln2(x))


class ALiBiLM(nn.Module):
    def __init__(self, vocab_size=50304, d_model=768, n_layers=12, n_heads=12, dropout=0.0):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads, dropout) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, idx, targets=None, key_padding_mask=None):
        x = self.wte(idx)
        for blk in self.blocks:
            x = blk(x, key_padding_mask)
        logits = self.lm_head(self.ln_f(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-100)


if __name__ == "__main__":
    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    model = ALiBiLM(vocab_size=1000, d_model=256, n_layers=4, n_heads=8).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step in range(2000):
        T = int(torch.randint(64, 1024, ()).item())
        idx = torch.randint(0, 1000, (8, T), device=dev)
        _, loss = model(idx[:, :-1], idx[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, T, round(loss.item(), 4))
