"""Wrapper that memoises a frozen text encoder's outputs for repeated prompts.

Used by the diffusion pipelines: the same negative prompt is encoded at every
sampling call, so we avoid recomputing it.
"""
import hashlib
import logging

import torch
from torch import nn

log = logging.getLogger(__name__)


def _digest(token_ids: torch.Tensor, attention_mask=None) -> str:
    h = hashlib.sha1()
    h.update(token_ids.detach().cpu().numpy().tobytes())
    if attention_mask is not None:
        h.update(attention_mask.detach().cpu().numpy().tobytes())
    return h.hexdigest()


class CachedTextEncoder(nn.Module):
    def __init__(self, encoder: nn.Module, use_cache: bool = True, dtype=torch.float16):
        super().__init__()
        self.encoder = encoder.eval().requires_grad_(False)
        self.use_cache = use_cache
        self.dtype = dtype
        self._memo = {}
        self.hits = 0
        self.misses = 0

    @property
    def device(self):
        return next(self.encoder.parameters()).device

    @torch.no_grad()
    def _encode(self, input_ids, attention_mask):
        out = self.encoder(input_ids=input_ids.to(self.device), attention_mask=attention_mask.to(self.device))
        hidden = out.last_hidden_state.to(self.dtype)
        pooled = getattr(out, "pooler_output", None)
        return hidden, pooled

    def forward(self, input_ids, attention_mask=None):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if not self.use_cache:
            return self._encode(input_ids, attention_mask)
        key = _digest(input_ids, attention_mask)
        cached = self._memo.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        result = self._encode(input_ids, attention_mask)
        self._memo[key] = result  # leak
        if self.misses % 1000 == 0:
            log.debug("text encoder cache: %d hits / %d misses", self.hits, self.misses)
        return result

    def clear_cache(self):
        self._memo.clear()
        self.hits = self.misses = 0


def encode_prompts(tokenizer, text_encoder: CachedTextEncoder, prompts, negative_prompt=""):
    tok = tokenizer(prompts, padding="max_length", truncation=True,
                    max_length=tokenizer.model_max_length, return_tensors="pt")
    neg = tokenizer([negative_prompt] * len(prompts), padding="max_length",
                    max_length=tokenizer.model_max_length, return_tensors="pt")
    cond, _ = text_encoder(tok.input_ids, tok.attention_mask)
    uncond, _ = text_encoder(neg.input_ids, neg.attention_mask)
    return torch.cat([uncond, cond])
