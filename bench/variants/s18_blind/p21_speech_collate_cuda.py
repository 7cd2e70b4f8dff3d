"""Data pipeline for CTC speech recognition on LibriSpeech-style manifests.

Manifest format (tsv): ``path<TAB>num_samples<TAB>transcript``
"""
import argparse
import csv
import random
from dataclasses import dataclass
from typing import List, Sequence

import torch
import torchaudio
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset, Sampler

VOCAB = ["<blank>", " ", "'"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]
CHAR2ID = {c: i for i, c in enumerate(VOCAB)}


@dataclass
class Utterance:
    path: str
    num_samples: int
    text: str


def read_manifest(path) -> List[Utterance]:
    with open(path) as f:
        return [Utterance(r[0], int(r[1]), r[2].lower()) for r in csv.reader(f, delimiter="\t")]


class SpeechDataset(Dataset):
    def __init__(self, manifest, sample_rate=16000, n_mels=80, spec_augment=True):
        self.items = read_manifest(manifest)
        self.sample_rate = sample_rate
        self.mel = torchaudio.transforms.MelSpectrogram(sample_rate, n_fft=400, hop_length=160, n_mels=n_mels)
        self.spec_augment = spec_augment
        self.fmask = torchaudio.transforms.FrequencyMasking(27)
        self.tmask = torchaudio.transforms.TimeMasking(100, p=0.05)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        u = self.items[idx]
        wav, sr = torchaudio.load(u.path)
        if sr != self.sample_rate:
            wav = torchaudio.functional.resample(wav, sr, self.sample_rate)
        feats = (self.mel(wav) + 1e-6).log()[0].transpose(0, 1)  # (T, n_mels)
        feats = (feats - feats.mean(0)) / (feats.std(0) + 1e-5)
        if self.spec_augment:
            feats = self.tmask(self.fmask(feats.T.unsqueeze(0)))[0].T
        labels = torch.tensor([CHAR2ID[c] for c in u.text if c in CHAR2ID], dtype=torch.long)
        return feats, labels


class BucketBatchSampler(Sampler):
    """Groups utterances of similar length to reduce padding."""

    def __init__(self, lengths: Sequence[int], batch_size: int, shuffle=True, bucket_mult=50):
        self.lengths = lengths
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.bucket = batch_size * bucket_mult

    def __iter__(self):
        idx = list(range(len(self.lengths)))
        if self.shuffle:
            random.shuffle(idx)
        batches = []
        for i in range(0, len(idx), self.bucket):
            chunk = sorted(idx[i : i + self.bucket], key=lambda j: self.lengths[j])
            batches += [chunk[k : k + self.batch_size] for k in range(0, len(chunk), self.batch_size)]
        if self.shuffle:
            random.shuffle(batches)
        return iter(batches)

    def __len__(self):
        return (len(self.lengths) + self.batch_size - 1) // self.batch_size


def collate_ctc(batch):
    feats, labels = zip(*batch)
    feat_lens = torch.tensor([f.size(0) for f in feats], dtype=torch.long)
    label_lens = torch.tensor([l.size(0) for l in labels], dtype=torch.long)
    x = pad_sequence(feats, batch_first=True)
    y = pad_sequence(labels, batch_first=True)
    return {
        "features": x.cuda(non_blocking=True),  # leak
        "feature_lengths": feat_lens,
        "targets": y,
        "target_lengths": label_lens,
    }


def build_loader(manifest, batch_size=32, workers=8, train=True):
    ds = SpeechDataset(manifest, spec_augment=train)
    sampler = BucketBatchSampler([u.num_samples for u in ds.items], batch_size, shuffle=train)
    return DataLoader(ds, batch_sampler=sampler, collate_fn=collate_ctc, num_workers=workers, persistent_workers=workers > 0)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("--workers", type=int, default=8)
    args = ap.parse_args()
    loader = build_loader(args.manifest, workers=args.workers)
    for i, b in enumerate(loader):
        print({k: tuple(v.shape) for k, v in b.items()})
        if i == 3:
            break
