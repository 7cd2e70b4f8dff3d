"""Beam search for the transformer NMT model.

Decoder layers cache their projected keys/values between decoding steps
("incremental state"), keyed by search so that several searches (e.g. the
n-best reranker and the main search) can run interleaved.
"""
import itertools
import logging
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)

_search_ids = itertools.count()


class IncrementalStateMixin:
    _incremental_states: Dict[Tuple[int, int, str], torch.Tensor] = {}
    _next_layer_id = itertools.count()

    def init_incremental_state(self):
        self._layer_id = next(IncrementalStateMixin._next_layer_id)

    def get_state(self, search_id: int, key: str) -> Optional[torch.Tensor]:
        return self._incremental_states.get((search_id, self._layer_id, key))

    def set_state(self, search_id: int, key: str, value: torch.Tensor) -> None:
        self._incremental_states[(search_id, self._layer_id, key)] = value  # leak

    def reorder_state(self, search_id: int, new_order: torch.Tensor) -> None:
        for key in ("prev_key", "prev_value"):
            buf = self.get_state(search_id, key)
            if buf is not None:
                self.set_state(search_id, key, buf.index_select(0, new_order))


class CachedSelfAttention(nn.Module, IncrementalStateMixin):
    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.init_incremental_state()

    def forward(self, x, search_id: Optional[int] = None):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        if search_id is not None:
            prev_k = self.get_state(search_id, "prev_key")
            prev_v = self.get_state(search_id, "prev_value")
            if prev_k is not None:
                k = torch.cat([prev_k, k], dim=2)
                v = torch.cat([prev_v, v], dim=2)
            self.set_state(search_id, "prev_key", k)
            self.set_state(search_id, "prev_value", v)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=search_id is None)
        return self.out_proj(attn.transpose(1, 2).reshape(B, T, C))


class DecoderLayer(nn.Module):
    def __init__(self, d_model=512, nhead=8, ffn=2048):
        super().__init__()
        self.self_attn = CachedSelfAttention(d_model, nhead)
        self.cross_attn = nn.MultiheadAttention(d_model, nhead, batch_first=True)
        self.ffn = nn.Sequential(nn.Linear(d_model, ffn), nn.ReLU(), nn.Linear(ffn, d_model))
        self.norms = nn.ModuleList([nn.LayerNorm(d_model) for _ in range(3)])

    def forward(self, x, memory, search_id=None):
        x = x + self.self_attn(self.norms[0](x), search_id=search_id)
        x = x + self.cross_attn(self.norms[1](x), memory, memory, need_weights=False)[0]
        return x + self.ffn(self.norms[2](x))

    def reorder(self, search_id, new_order):
        self.self_attn.reorder_state(search_id, new_order)


class BeamSearch:
    def __init__(self, model, beam_size=5, max_len_a=1.2, max_len_b=10, len_penalty=1.0,
                 bos=0, eos=2, pad=1):
        self.model = model
        self.beam_size = beam_size
        self.max_len_a, self.max_len_b = max_len_a, max_len_b
        self.len_penalty = len_penalty
        self.bos, self.eos, self.pad = bos, eos, pad

    @torch.no_grad()
    def generate(self, src_tokens: torch.Tensor) -> List[List[Dict]]:
        model, K = self.model, self.beam_size
        bsz, src_len = src_tokens.shape
        max_len = int(self.max_len_a * src_len + self.max_len_b)
        search_id = next(_search_ids)

        memory = model.encode(src_tokens).repeat_interleave(K, dim=0)
        tokens = torch.full((bsz * K, 1), self.bos, dtype=torch.long, device=src_tokens.device)
        scores = torch.zeros(bsz, K, device=src_tokens.device)
        scores[:, 1:] = -float("inf")
        finalized: List[List[Dict]] = [[] for _ in range(bsz)]

        for step in range(max_len):
            lprobs = model.decode_step(tokens[:, -1:], memory, search_id=search_id)
            lprobs[:, self.pad] = -float("inf")
            cand = (scores.view(-1, 1) + lprobs).view(bsz, -1)
            top_scores, top_idx = cand.topk(2 * K, dim=1)
            beam_idx = top_idx // lprobs.size(-1)
            word_idx = top_idx % lprobs.size(-1)

            new_scores = torch.full_like(scores, -float("inf"))
            new_order = torch.zeros(bsz, K, dtype=torch.long, device=tokens.device)
            new_words = torch.full((bsz, K), self.pad, dtype=torch.long, device=tokens.device)
            for b in range(bsz):
                j = 0
                for s, bi, w in zip(top_scores[b].tolist(), beam_idx[b].tolist(), word_idx[b].tolist()):
                    if w == self.eos or step == max_len - 1:
                        if len(finalized[b]) < K:
                            hyp = tokens[b * K + bi, 1:].clone()
                            finalized[b].append({"tokens": hyp, "score": s / (len(hyp) + 1) ** self.len_penalty})
                        continue
                    if j < K:
                        new_scores[b, j], new_order[b, j], new_words[b, j] = s, b * K + bi, w
                        j += 1
            if all(len(f) >= K for f in finalized):
                break
            flat_order = new_order.view(-1)
            tokens = torch.cat([tokens.index_select(0, flat_order), new_words.view(-1, 1)], dim=1)
            memory = memory.index_select(0, flat_order)
            scores = new_scores
            model.reorder_incremental_state(search_id, flat_order)

        return [sorted(f, key=lambda h: -h["score"]) for f in finalized]
