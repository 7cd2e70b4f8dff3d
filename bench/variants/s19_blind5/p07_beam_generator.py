"""Beam-search sequence generator for encoder-decoder models.

Implements the usual fairseq-style loop: the encoder runs once per source batch,
the decoder is stepped incrementally and its recurrent state is reordered after
every step according to the surviving beams.  Encoder outputs are memoised per
source sentence so that interactive use (the same source re-decoded with a
different beam size / length penalty) skips the encoder.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GenerationConfig:
    beam_size: int = 4
    max_len: int = 64
    len_penalty: float = 1.0
    bos: int = 1
    eos: int = 2
    pad: int = 0


class GRUSeq2Seq(nn.Module):
    def __init__(self, vocab: int, dim: int = 256) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.decoder = nn.GRUCell(2 * dim, dim)
        self.attn_proj = nn.Linear(dim, dim, bias=False)
        self.out = nn.Linear(2 * dim, vocab)

    def encode(self, src: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        enc, h = self.encoder(self.embed(src))
        return enc, h.squeeze(0)

    def decode_step(self, prev_tok: torch.Tensor, state: torch.Tensor, enc: torch.Tensor,
                    src_mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        scores = torch.einsum("bd,btd->bt", self.attn_proj(state), enc).masked_fill(~src_mask, -math.inf)
        ctx = torch.einsum("bt,btd->bd", scores.softmax(-1), enc)
        state = self.decoder(torch.cat([self.embed(prev_tok), ctx], dim=-1), state)
        return F.log_softmax(self.out(torch.cat([state, ctx], dim=-1)), dim=-1), state


class SequenceGenerator:
    def __init__(self, model: GRUSeq2Seq, cfg: GenerationConfig) -> None:
        self.model = model.eval()
        self.cfg = cfg
        self._encoder_memo: Dict[Tuple[int, ...], Tuple[torch.Tensor, torch.Tensor]] = {}

    def _encode_one(self, src_row: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        key = tuple(src_row.tolist())
        hit = self._encoder_memo.get(key)
        if hit is not None:
            return hit
        enc, h = self.model.encode(src_row.unsqueeze(0))
        enc_out = (enc[0], h[0])
        self._encoder_memo[key] = enc_out  # leak
        return enc_out

    def _encode(self, src: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        pairs = [self._encode_one(row) for row in src]
        return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])

    @torch.no_grad()
    def generate(self, src: torch.Tensor) -> List[List[int]]:
        cfg, k = self.cfg, self.cfg.beam_size
        bsz = src.size(0)
        enc, state = self._encode(src)
        src_mask = (src != cfg.pad)
        # expand to bsz * beam
        enc = enc.repeat_interleave(k, 0)
        src_mask = src_mask.repeat_interleave(k, 0)
        state = state.repeat_interleave(k, 0)

        tokens = torch.full((bsz * k, 1), cfg.bos, dtype=torch.long, device=src.device)
        scores = torch.zeros(bsz, k, device=src.device)
        scores[:, 1:] = -math.inf
        finished: List[List[Tuple[float, List[int]]]] = [[] for _ in range(bsz)]

        for step in range(cfg.max_len):
            lprobs, state = self.model.decode_step(tokens[:, -1], state, enc, src_mask)
            vocab = lprobs.size(-1)
            cand = (scores.view(-1, 1) + lprobs).view(bsz, k * vocab)
            top_scores, top_idx = cand.topk(2 * k, dim=-1)
            beam_idx, tok_idx = top_idx // vocab, top_idx % vocab

            new_scores = torch.full_like(scores, -math.inf)
            new_origin = torch.zeros(bsz, k, dtype=torch.long, device=src.device)
            new_tok = torch.full((bsz, k), cfg.pad, dtype=torch.long, device=src.device)
            for b in range(bsz):
                slot = 0
                for s, bi, ti in zip(top_scores[b].tolist(), beam_idx[b].tolist(), tok_idx[b].tolist()):
                    if ti == cfg.eos:
                        hyp = tokens[b * k + bi, 1:].tolist()
                        finished[b].append((s / (len(hyp) + 1) ** cfg.len_penalty, hyp))
                        continue
                    new_scores[b, slot], new_origin[b, slot], new_tok[b, slot] = s, b * k + bi, ti
                    slot += 1
                    if slot == k:
                        break
            if all(len(f) >= k for f in finished):
                break
            order = new_origin.view(-1)
            tokens = torch.cat([tokens.index_select(0, order), new_tok.view(-1, 1)], dim=1)
            state = state.index_select(0, order)
            scores = new_scores

        for b in range(bsz):
            if not finished[b]:
                finished[b].append((scores[b, 0].item(), tokens[b * k, 1:].tolist()))
        return [max(f, key=lambda t: t[0])[1] for f in finished]


if __name__ == "__main__":
    torch.manual_seed(0)
    net = GRUSeq2Seq(vocab=1000)
    gen = SequenceGenerator(net, GenerationConfig(beam_size=5, max_len=20))
    for _ in range(5000):
        src_batch = torch.randint(3, 1000, (16, 24))
        hyps = gen.generate(src_batch)
