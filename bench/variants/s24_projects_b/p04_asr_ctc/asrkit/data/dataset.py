"""Manifest-driven speech dataset.

A manifest is a JSON-lines file with ``audio_filepath``, ``duration`` and
``text`` fields (NeMo style).
"""
from __future__ import annotations

import json
import logging
from typing import List, Sequence, Tuple

import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import Dataset

from . import transforms

logger = logging.getLogger(__name__)


class CharTokenizer:
    """Character vocabulary; index 0 is the CTC blank."""

    def __init__(self, alphabet: str = " abcdefghijklmnopqrstuvwxyz'"):
        self.itos = ["<blank>"] + list(alphabet)
        self.stoi = {c: i for i, c in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> List[int]:
        return [self.stoi[c] for c in text.lower() if c in self.stoi]

    def decode(self, ids: Sequence[int]) -> str:
        out, prev = [], None
        for i in ids:
            if i != prev and i != 0:
                out.append(self.itos[i])
            prev = i
        return "".join(out)


class ManifestDataset(Dataset):
    def __init__(self, manifest: str, tokenizer: CharTokenizer, sample_rate: int = 16000,
                 max_duration: float = 16.0, train: bool = True):
        self.tokenizer = tokenizer
        self.sample_rate = sample_rate
        self.train = train
        self.items = []
        with open(manifest) as fh:
            for line in fh:
                rec = json.loads(line)
                if rec["duration"] <= max_duration:
                    self.items.append(rec)
        logger.info("%s: %d utterances", manifest, len(self.items))

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, idx: int) -> Tuple[torch.Tensor, torch.Tensor]:
        rec = self.items[idx]
        wave = transforms.load_waveform(rec["audio_filepath"], self.sample_rate)
        if self.train:
            wave = transforms.speed_perturb(wave, self.sample_rate)
        feats = transforms.log_mel(wave, self.sample_rate)
        if self.train:
            feats = transforms.spec_augment(feats)
        target = torch.tensor(self.tokenizer.encode(rec["text"]), dtype=torch.long)
        return feats, target


def collate_batch(batch):
    feats, targets = zip(*batch)
    feat_lens = torch.tensor([f.size(0) for f in feats], dtype=torch.long)
    target_lens = torch.tensor([t.size(0) for t in targets], dtype=torch.long)
    feats = pad_sequence(feats, batch_first=True)
    targets = pad_sequence(targets, batch_first=True)
    return feats, feat_lens, targets, target_lens
