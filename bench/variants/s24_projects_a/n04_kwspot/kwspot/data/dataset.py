"""Speech Commands dataset producing log-mel features."""
import logging
import os

import torch
import torchaudio
from torch.utils.data import DataLoader, Dataset

from kwspot.data import features

log = logging.getLogger(__name__)

LABELS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]


class SpeechCommands(Dataset):
    def __init__(self, root: str, subset: str, device: torch.device):
        self.ds = torchaudio.datasets.SPEECHCOMMANDS(root, download=True, subset=subset)
        self.device = device
        self.index = [i for i, path in enumerate(self.ds._walker)
                      if os.path.basename(os.path.dirname(path)) in LABELS]
        log.info("%s: %d utterances", subset, len(self.index))

    def __len__(self):
        return len(self.index)

    def __getitem__(self, i):
        wave, sr, label, *_ = self.ds[self.index[i]]
        feats = features.log_mel(wave, self.device)
        return feats, LABELS.index(label)


def collate(batch):
    feats, labels = zip(*batch)
    return torch.stack(feats), torch.tensor(labels, device=feats[0].device)


def build_loader(root: str, subset: str, batch_size: int, device: torch.device) -> DataLoader:
    ds = SpeechCommands(root, subset, device)
    # Features are produced on `device` inside __getitem__, which CUDA does not
    # allow in forked workers; keep loading in the main process.
    return DataLoader(ds, batch_size=batch_size, shuffle=(subset == "training"),
                      num_workers=0, collate_fn=collate)
