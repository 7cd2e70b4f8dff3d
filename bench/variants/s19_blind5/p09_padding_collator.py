"""Padding collator for causal-LM and seq2seq fine-tuning.

Turns a list of tokenised examples (dicts with ``input_ids`` and optionally
``labels``) into a padded batch with ``attention_mask`` and ``position_ids``.
Mask construction for packed / left-padded batches is surprisingly expensive
for long sequences, so masks are shared between batches with the same layout.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

IGNORE_INDEX = -100

# (padding side, padded length, per-example lengths) -> (attention_mask, position_ids)
_LAYOUT_CACHE: Dict[Tuple[str, int, Tuple[int, ...]], Tuple[torch.Tensor, torch.Tensor]] = {}


def _round_up(n: int, multiple: Optional[int]) -> int:
    if not multiple:
        return n
    return ((n + multiple - 1) // multiple) * multiple


def _build_layout(lengths: Sequence[int], padded_len: int, side: str) -> Tuple[torch.Tensor, torch.Tensor]:
    key = (side, padded_len, tuple(lengths))
    cached = _LAYOUT_CACHE.get(key)
    if cached is not None:
        return cached
    bsz = len(lengths)
    mask = torch.zeros(bsz, padded_len, dtype=torch.long)
    pos = torch.zeros(bsz, padded_len, dtype=torch.long)
    for i, n in enumerate(lengths):
        sl = slice(padded_len - n, padded_len) if side == "left" else slice(0, n)
        mask[i, sl] = 1
        pos[i, sl] = torch.arange(n)
    _LAYOUT_CACHE[key] = (mask, pos)  # leak
    return mask, pos


def _pad(seqs: Sequence[Sequence[int]], padded_len: int, value: int, side: str) -> torch.Tensor:
    out = torch.full((len(seqs), padded_len), value, dtype=torch.long)
    for i, s in enumerate(seqs):
        t = torch.as_tensor(s, dtype=torch.long)
        if side == "left":
            out[i, padded_len - len(s):] = t
        else:
            out[i, : len(s)] = t
    return out


@dataclass
class DataCollatorForCausalLM:
    pad_token_id: int
    padding_side: str = "right"
    pad_to_multiple_of: Optional[int] = 8
    max_length: Optional[int] = None
    return_position_ids: bool = True

    def _truncate(self, ids: List[int]) -> List[int]:
        if self.max_length is not None and len(ids) > self.max_length:
            return ids[: self.max_length]
        return ids

    def __call__(self, features: List[Dict[str, Any]]) -> Dict[str, torch.Tensor]:
        input_ids = [self._truncate(list(f["input_ids"])) for f in features]
        if "labels" in features[0]:
            labels = [self._truncate(list(f["labels"])) for f in features]
        else:
            labels = [list(ids) for ids in input_ids]
        lengths = [len(ids) for ids in input_ids]
        padded_len = _round_up(max(lengths), self.pad_to_multiple_of)

        batch = {
            "input_ids": _pad(input_ids, padded_len, self.pad_token_id, self.padding_side),
            "labels": _pad(labels, padded_len, IGNORE_INDEX, self.padding_side),
        }
        mask, pos = _build_layout(lengths, padded_len, self.padding_side)
        batch["attention_mask"] = mask
        if self.return_position_ids:
            batch["position_ids"] = pos
        return batch


class _SyntheticInstructionDataset(torch.utils.data.Dataset):
    def __init__(self, n: int = 100_000, vocab: int = 32000, max_len: int = 1024, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self._lengths = torch.randint(16, max_len, (n,), generator=g).tolist()
        self._vocab = vocab

    def __len__(self) -> int:
        return len(self._lengths)

    def __getitem__(self, idx: int) -> Dict[str, List[int]]:
        n = self._lengths[idx]
        ids = [(idx * 7919 + j * 104729) % self._vocab for j in range(n)]
        return {"input_ids": ids}


if __name__ == "__main__":
    collator = DataCollatorForCausalLM(pad_token_id=0, padding_side="left")
    loader = torch.utils.data.DataLoader(_SyntheticInstructionDataset(), batch_size=8, shuffle=True,
                                         num_workers=4, collate_fn=collator)
    for step, b in enumerate(loader):
        if step % 1000 == 0:
            print(step, b["input_ids"].shape, int(b["attention_mask"].sum()))
