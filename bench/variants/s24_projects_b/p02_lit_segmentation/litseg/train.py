"""Fit the segmentation model on a folder of image/mask pairs.

Expected layout::

    root/images/{train,val}/*.jpg
    root/masks/{train,val}/*.png
"""
from __future__ import annotations

import argparse
from pathlib import Path

import lightning.pytorch as pl
import numpy as np
import torch
from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint
from PIL import Image
from torch.utils.data import DataLoader, Dataset

from litseg.module import SegmentationModule

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


class PairFolder(Dataset):
    def __init__(self, root: str, split: str, size: int = 256):
        self.images = sorted((Path(root) / "images" / split).glob("*.jpg"))
        self.mask_dir = Path(root) / "masks" / split
        self.size = size
        self.train = split == "train"

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        path = self.images[idx]
        img = Image.open(path).convert("RGB").resize((self.size, self.size), Image.BILINEAR)
        mask = Image.open(self.mask_dir / f"{path.stem}.png").resize((self.size, self.size),
                                                                     Image.NEAREST)
        img = (np.asarray(img, dtype=np.float32) / 255.0 - MEAN) / STD
        mask = np.asarray(mask, dtype=np.int64)
        if self.train and np.random.rand() < 0.5:
            img, mask = img[:, ::-1], mask[:, ::-1]
        return torch.from_numpy(img.transpose(2, 0, 1).copy()), torch.from_numpy(mask.copy())


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--num-classes", type=int, default=21)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--precision", default="16-mixed")
    return p.parse_args()


def main():
    args = parse_args()
    pl.seed_everything(42)
    train_dl = DataLoader(PairFolder(args.root, "train"), batch_size=args.batch_size,
                          shuffle=True, num_workers=args.workers, drop_last=True,
                          persistent_workers=args.workers > 0)
    val_dl = DataLoader(PairFolder(args.root, "val"), batch_size=args.batch_size,
                        num_workers=args.workers)
    model = SegmentationModule(num_classes=args.num_classes, lr=args.lr)
    trainer = pl.Trainer(
        max_epochs=args.epochs, accelerator="auto", devices="auto", precision=args.precision,
        callbacks=[ModelCheckpoint(monitor="val/miou", mode="max", save_last=True),
                   LearningRateMonitor("step")],
        log_every_n_steps=20,
    )
    trainer.fit(model, train_dl, val_dl)


if __name__ == "__main__":
    main()
