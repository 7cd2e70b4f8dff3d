"""Manifest-driven dataset and CTC padding collator."""
import json
import logging
from dataclasses import dataclass
from typing import Dict, List

import torch
import torchaudio
from torch.utils.data import Dataset

from asr import features

logger = logging.getLogger(__name__)


class CharTokenizer:
    def __init__(self, vocab_file: str):
        with open(vocab_file) as f:
            self.vocab = [line.rstrip("\n") for line in f]
        self.blank_id = 0
        self.stoi = {c: i for i, c in enumerate(self.vocab)}

    def encode(self, text: str) -> List[int]:
        return [self.stoi[c] for c in text.lower() if c in self.stoi]

    def decode(self, ids) -> str:
        out, prev = [], None
        for i in ids:
            if i != prev and i != self.blank_id:
                out.append(self.vocab[i])
            prev = i
        return "".join(out)


class ManifestDataset(Dataset):
    """NeMo-style jsonl manifest: {"audio_filepath", "duration", "text"}."""

    def __init__(self, manifest: str, tokenizer: CharTokenizer, max_duration: float = 20.0, sample_rate: int = 16000):
        with open(manifest) as f:
            rows = [json.loads(line) for line in f]
        self.rows = [r for r in rows if r["duration"] <= max_duration]
        logger.info("%s: kept %d/%d utterances", manifest, len(self.rows), len(rows))
        self.tok = tokenizer
        self.sr = sample_rate

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx) -> Dict[str, torch.Tensor]:
        row = self.rows[idx]
        wav, sr = torchaudio.load(row["audio_filepath"])
        if sr != self.sr:
            wav = torchaudio.functional.resample(wav, sr, self.sr)
        feats = features.utterance_cmvn(features.log_mel(wav.mean(0), self.sr))
        return {"input_features": feats, "labels": torch.tensor(self.tok.encode(row["text"]), dtype=torch.long)}


@dataclass
class CTCCollator:
    pad_label: int = -100

    def __call__(self, batch: List[Dict[str, torch.Tensor]]) -> Dict[str, torch.Tensor]:
        feats = [b["input_features"] for b in batch]
        labels = [b["labels"] for b in batch]
        return {
            "input_features": torch.nn.utils.rnn.pad_sequence(feats, batch_first=True),
            "feature_lengths": torch.tensor([f.shape[0] for f in feats]),
            "labels": torch.nn.utils.rnn.pad_sequence(labels, batch_first=True, padding_value=self.pad_label),
        }
