"""Autoregressive prompt-completion predictor with a preallocated, slot-indexed KV cache."""
from collections import OrderedDict
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class KVCache(nn.Module):
    def __init__(self, n_layers: int, max_batch: int, n_heads: int, max_len: int, head_dim: int,
                 dtype=torch.float16):
        super().__init__()
        shape = (n_layers, max_batch, n_heads, max_len, head_dim)
        self.register_buffer("k", torch.zeros(shape, dtype=dtype), persistent=False)
        self.register_buffer("v", torch.zeros(shape, dtype=dtype), persistent=False)
        self.max_len = max_len

    def write(self, layer: int, slot: int, pos: int, k: torch.Tensor, v: torch.Tensor):
        T = k.size(-2)
        self.k[layer, slot, :, pos:pos + T] = k[0]
        self.v[layer, slot, :, pos:pos + T] = v[0]
        return self.k[layer, slot:slot + 1, :, :pos + T], self.v[layer, slot:slot + 1, :, :pos + T]


class Block(nn.Module):
    def __init__(self, d: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, cache: KVCache, layer: int, slot: int, pos: int):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.n_heads, -1).transpose(1, 2) for t in (q, k, v))
        k_all, v_all = cache.write(layer, slot, pos, k, v)
        att = F.scaled_dot_product_attention(q, k_all, v_all, is_causal=(T > 1 and pos == 0))
        x = x + self.proj(att.transpose(1, 2).reshape(B, T, C))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 32000, d: int = 1024, n_layers: int = 16, n_heads: int = 16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(4096, d)
        self.blocks = nn.ModuleList(Block(d, n_heads) for _ in range(n_layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.n_layers, self.n_heads, self.head_dim = n_layers, n_heads, d // n_heads

    def forward(self, ids, cache: KVCache, slot: int, pos: int):
        p = torch.arange(pos, pos + ids.size(1), device=ids.device)
        x = self.emb(ids) + self.pos(p)
        for i, blk in enumerate(self.blocks):
            x = blk(x, cache, i, slot, pos)
        return self.head(self.ln(x[:, -1]))


class Predictor:
    def __init__(self, model: TinyLM, tokenizer, max_len: int = 2048, slots: int = 8,
                 device: str = "cuda", prompt_cache_size: int = 256):
        self.model = model.to(device).half().eval()
        self.tok = tokenizer
        self.device = device
        self.cache = KVCache(model.n_layers, slots, model.n_heads, max_len, model.head_dim).to(device)
        self.free_slots = list(range(slots))
        self.prompt_ids: "OrderedDict[str, List[int]]" = OrderedDict()
        self.prompt_cache_size = prompt_cache_size

    def _encode(self, prompt: str) -> List[int]:
        ids = self.prompt_ids.get(prompt)
        if ids is None:
            ids = self.tok.encode(prompt)
            self.prompt_ids[prompt] = ids
            if len(self.prompt_ids) > self.prompt_cache_size:
                self.prompt_ids.popitem(last=False)
        else:
            self.prompt_ids.move_to_end(prompt)
        return ids

    @torch.inference_mode()
    def generate(self, prompt: str, max_new_tokens: int = 64, temperature: float = 0.8) -> str:
        ids = self._encode(prompt)[-(self.cache.max_len - max_new_tokens):]
        slot = self.free_slots.pop()
        try:
            x = torch.tensor([ids], device=self.device)
            logits = self.model(x, self.cache, slot, 0)
            pos = len(ids)
            out: List[int] = []
            for _ in range(max_new_tokens):
                probs = F.softmax(logits.float() / temperature, dim=-1)
                nxt = torch.multinomial(probs, 1)
                tok_id = int(nxt.item())
                if tok_id == self.tok.eos_token_id:
                    break
                out.append(tok_id)
                logits = self.model(nxt, self.cache, slot, pos)
                pos += 1
            return self.tok.decode(out)
        finally:
            self.free_slots.append(slot)
