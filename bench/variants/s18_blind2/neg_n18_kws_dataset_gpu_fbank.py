"""Keyword-spotting data pipeline + training (Speech Commands v2).

Feature extraction is done with torchaudio kaldi-compatible fbanks; the SpecAugment
masks are applied in the dataset so that every worker produces ready-to-use features.
"""
import argparse
import os
import random

import torch
import torch.nn as nn
import torchaudio
import torchaudio.compliance.kaldi as kaldi
from torch.utils.data import DataLoader, Dataset

LABELS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]


def load_list(root, name):
    with open(os.path.join(root, name)) as f:
        return [ln.strip() for ln in f if ln.strip()]


def fbank_features(wav, sr, n_mels=80):
    # runs inside DataLoader workers: keep everything on CPU
    feats = kaldi.fbank(wav * 32768, num_mel_bins=n_mels, sample_frequency=sr, dither=0.0)
    return feats - feats.mean(0, keepdim=True)


def spec_augment(feats, F=15, T=20, n_masks=2):
    feats = feats.clone()
    for _ in range(n_masks):
        f0 = random.randint(0, feats.size(1) - F)
        feats[:, f0:f0 + random.randint(0, F)] = 0
        t0 = random.randint(0, max(0, feats.size(0) - T))
        feats[t0:t0 + random.randint(0, T)] = 0
    return feats


class SpeechCommands(Dataset):
    def __init__(self, root, split="train", augment=True):
        self.root = root
        self.augment = augment and split == "train"
        val = set(load_list(root, "validation_list.txt"))
        test = set(load_list(root, "testing_list.txt"))
        items = []
        for lbl in LABELS:
            for fn in os.listdir(os.path.join(root, lbl)):
                rel = f"{lbl}/{fn}"
                in_split = {"validation": rel in val, "testing": rel in test}.get(split, rel not in val and rel not in test)
                if in_split:
                    items.append((rel, LABELS.index(lbl)))
        self.items = items

    def __len__(self):
        return len(self.items)

    def _pad(self, wav, n=16000):
        return wav[:, :n] if wav.size(1) >= n else nn.functional.pad(wav, (0, n - wav.size(1)))

    def __getitem__(self, idx):
        rel, label = self.items[idx]
        wav, sr = torchaudio.load(os.path.join(self.root, rel))
        feats = fbank_features(self._pad(wav), sr)
        if self.augment:
            feats = spec_augment(feats)
        return feats, label


class TCResNet(nn.Module):
    def __init__(self, n_mels=80, n_cls=len(LABELS), width=(16, 24, 32, 48)):
        super().__init__()
        layers, cin = [nn.Conv1d(n_mels, width[0], 3, padding=1, bias=False)], width[0]
        for w in width[1:]:
            layers += [nn.Conv1d(cin, w, 9, stride=2, padding=4, bias=False), nn.BatchNorm1d(w), nn.ReLU()]
            cin = w
        self.body = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, n_cls)

    def forward(self, x):
        return self.fc(self.body(x.transpose(1, 2)).mean(-1))


def run_epoch(model, loader, opt=None):
    train = opt is not None
    model.train(train)
    correct = n = 0
    with torch.set_grad_enabled(train):
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            logits = model(x)
            if train:
                loss = nn.functional.cross_entropy(logits, y, label_smoothing=0.1)
                opt.zero_grad()
                loss.backward()
                opt.step()
            correct += (logits.argmax(1) == y).sum().item()
            n += y.numel()
    return correct / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/speech_commands_v0.02")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--bs", type=int, default=256)
    args = ap.parse_args()

    train_dl = DataLoader(SpeechCommands(args.root, "train"), args.bs, shuffle=True,
                          num_workers=args.workers, persistent_workers=args.workers > 0)
    val_dl = DataLoader(SpeechCommands(args.root, "validation"), args.bs, num_workers=args.workers)
    model = TCResNet().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    for ep in range(args.epochs):
        tr = run_epoch(model, train_dl, opt)
        va = run_epoch(model, val_dl)
        print(f"epoch {ep:02d} train_acc {tr:.4f} val_acc {va:.4f}")


if __name__ == "__main__":
    main()
