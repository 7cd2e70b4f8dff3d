"""Speech Commands v2 dataset wrapper with on-the-fly augmentation."""
from __future__ import annotations

import logging
import os
import random
from typing import List, Optional

import torch
import torchaudio
from torch.utils.data import Dataset

from .transforms import fix_length, mfcc_features, mix_noise, time_shift

logger = logging.getLogger(__name__)

LABELS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go",
          "_unknown_", "_silence_"]


def read_list(root: str, name: str) -> set:
    with open(os.path.join(root, name)) as fh:
        return {line.strip() for line in fh if line.strip()}


class SpeechCommands(Dataset):
    def __init__(self, root: str, split: str = "train", augment: Optional[bool] = None):
        self.root = root
        self.augment = split == "train" if augment is None else augment
        val, test = read_list(root, "validation_list.txt"), read_list(root, "testing_list.txt")
        self.files: List[str] = []
        self.targets: List[int] = []
        for word in sorted(os.listdir(root)):
            d = os.path.join(root, word)
            if not os.path.isdir(d) or word.startswith("_"):
                continue
            label = LABELS.index(word) if word in LABELS else LABELS.index("_unknown_")
            for f in os.listdir(d):
                rel = f"{word}/{f}"
                in_split = {"validation": rel in val, "test": rel in test}.get(
                    split, rel not in val and rel not in test)
                if in_split:
                    self.files.append(os.path.join(d, f))
                    self.targets.append(label)
        noise_dir = os.path.join(root, "_background_noise_")
        self.noises = [torchaudio.load(os.path.join(noise_dir, f))[0]
                       for f in sorted(os.listdir(noise_dir)) if f.endswith(".wav")]
        logger.info("%s: %d clips", split, len(self.files))

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, idx: int):
        wave, _ = torchaudio.load(self.files[idx])
        wave = fix_length(wave)
        if self.augment:
            wave = time_shift(wave)
            if self.noises and random.random() < 0.8:
                wave = mix_noise(wave, random.choice(self.noises), random.uniform(5, 20))
        return mfcc_features(wave), self.targets[idx]


def pad_collate(batch):
    feats, labels = zip(*batch)
    return torch.stack(feats), torch.tensor(labels, dtype=torch.long)
