"""Data pipeline for CTC fine-tuning: NeMo-style JSON manifests -> log-mel batches.

Fbank extraction and SpecAugment run in the loader workers on CPU; batches
are moved to the GPU in the training loop.
"""
import json
import logging
import random
from typing import Dict, List

import torch
import torchaudio
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger(__name__)


class ManifestASRDataset(Dataset):
    def __init__(self, manifest_path: str, tokenizer, sample_rate=16000, n_mels=80,
                 max_duration=20.0):
        with open(manifest_path) as fh:
            entries = [json.loads(line) for line in fh]
        self.entries = [e for e in entries if e["duration"] <= max_duration]
        self.tokenizer = tokenizer
        self.sample_rate = sample_rate
        self.n_mels = n_mels
        logger.info("%s: kept %d / %d utterances", manifest_path, len(self.entries), len(entries))

    def __len__(self):
        return len(self.entries)

    def __getitem__(self, idx) -> Dict[str, torch.Tensor]:
        entry = self.entries[idx]
        wav, sr = torchaudio.load(entry["audio_filepath"])
        if sr != self.sample_rate:
            wav = torchaudio.functional.resample(wav, sr, self.sample_rate)
        wav = wav.mean(dim=0, keepdim=True)
        wav = wav.to(torch.float32)
        feats = torchaudio.compliance.kaldi.fbank(
            wav * 32768.0, num_mel_bins=self.n_mels, sample_frequency=self.sample_rate, dither=0.0
        )
        feats = (feats - feats.mean(0)) / (feats.std(0) + 1e-5)
        labels = torch.tensor(self.tokenizer.encode(entry["text"].lower()), dtype=torch.long)
        return {"features": feats, "labels": labels}


class SpecAugmentCollate:
    def __init__(self, freq_masks=2, freq_width=27, time_masks=10, time_ratio=0.05, train=True):
        self.freq_masks = freq_masks
        self.freq_width = freq_width
        self.time_masks = time_masks
        self.time_ratio = time_ratio
        self.train = train

    def _augment(self, feats: torch.Tensor) -> torch.Tensor:
        n_frames, n_mels = feats.shape
        for _ in range(self.freq_masks):
            w = random.randint(0, self.freq_width)
            f0 = random.randint(0, max(n_mels - w, 0))
            feats[:, f0:f0 + w] = 0.0
        max_t = max(1, int(self.time_ratio * n_frames))
        for _ in range(self.time_masks):
            w = random.randint(0, max_t)
            t0 = random.randint(0, max(n_frames - w, 0))
            feats[t0:t0 + w, :] = 0.0
        return feats

    def __call__(self, samples: List[Dict[str, torch.Tensor]]) -> Dict[str, torch.Tensor]:
        feats = [self._augment(s["features"]) if self.train else s["features"] for s in samples]
        labels = [s["labels"] for s in samples]
        feat_lens = torch.tensor([f.shape[0] for f in feats])
        label_lens = torch.tensor([len(l) for l in labels])
        return {
            "features": torch.nn.utils.rnn.pad_sequence(feats, batch_first=True),
            "feature_lengths": feat_lens,
            "labels": torch.nn.utils.rnn.pad_sequence(labels, batch_first=True, padding_value=0),
            "label_lengths": label_lens,
        }


def build_train_loader(manifest, tokenizer, batch_size=32, num_workers=8):
    dataset = ManifestASRDataset(manifest, tokenizer)
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=True,
        num_workers=num_workers,
        collate_fn=SpecAugmentCollate(train=True),
        pin_memory=True,
        drop_last=True,
    )


def train_epoch(model, loader, optimizer, ctc_loss, device="cuda"):
    model.train()
    for step, batch in enumerate(loader):
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        log_probs, out_lens = model(batch["features"], batch["feature_lengths"])
        loss = ctc_loss(log_probs.transpose(0, 1), batch["labels"], out_lens, batch["label_lengths"])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            logger.info("step %d ctc %.3f", step, loss.item())
