"""Dataset of preprocessed CT volumes stored as .npz (image, label, spacing)."""
import glob
import json
import logging
import os
from typing import Optional, Sequence

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from . import transforms as T

logger = logging.getLogger(__name__)


class CTVolumeDataset(Dataset):
    def __init__(self, root: str, split: str, target_spacing: Sequence[float] = (1.5, 1.5, 2.0),
                 transform: Optional[T.Compose] = None, cases: Optional[Sequence[str]] = None):
        self.root = root
        self.target_spacing = tuple(target_spacing)
        self.transform = transform
        if cases is None:
            with open(os.path.join(root, "splits.json")) as f:
                cases = json.load(f)[split]
        self.files = [os.path.join(root, "volumes", f"{c}.npz") for c in cases]
        missing = [f for f in self.files if not os.path.exists(f)]
        if missing:
            raise FileNotFoundError(f"{len(missing)} volumes missing, e.g. {missing[0]}")
        logger.info("%s: %d cases", split, len(self.files))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        with np.load(self.files[idx]) as npz:
            image = torch.from_numpy(npz["image"]).float()[None]
            label = torch.from_numpy(npz["label"].astype(np.int64))[None]
            spacing = tuple(float(s) for s in npz["spacing"])
        image = T.resample_spacing(image, spacing, self.target_spacing)
        label = T.resample_spacing(label.float(), spacing, self.target_spacing, mode="nearest").long()
        image = T.clip_and_normalize(image)
        sample = {"image": image, "label": label}
        if self.transform is not None:
            sample = self.transform(sample)
        sample["case"] = os.path.basename(self.files[idx])[:-4]
        return sample


def build_loaders(root: str, roi_size, batch_size: int = 2, num_workers: int = 4, samples_per_epoch=None):
    train_tf = T.Compose([T.RandSpatialCrop3D(roi_size), T.RandFlip3D()])
    train_ds = CTVolumeDataset(root, "train", transform=train_tf)
    val_ds = CTVolumeDataset(root, "val")
    train_dl = DataLoader(train_ds, batch_size=batch_size, shuffle=True, num_workers=num_workers,
                          persistent_workers=num_workers > 0, pin_memory=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=1, num_workers=max(1, num_workers // 2))
    return train_dl, val_dl


def list_cases(root: str):
    return sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(root, "volumes", "*.npz")))
