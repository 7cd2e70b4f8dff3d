"""Train a 2D U-Net on BraTS axial slices.

Originally written for the lab's tumour-segmentation project; the slices are
pre-extracted to .npy by ``prepare_slices.py``.
"""
import argparse
import json
import logging
import os
from glob import glob

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

from models.unet import UNet

logger = logging.getLogger("brats")


class SliceDataset(Dataset):
    def __init__(self, root, split="train"):
        self.images = sorted(glob(os.path.join(root, split, "img_*.npy")))
        self.masks = [p.replace("img_", "seg_") for p in self.images]

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        img = np.load(self.images[idx]).astype(np.float32)
        seg = np.load(self.masks[idx]).astype(np.int64)
        img = (img - img.mean(axis=(1, 2), keepdims=True)) / (img.std(axis=(1, 2), keepdims=True) + 1e-6)
        return torch.from_numpy(img), torch.from_numpy(seg)


def soft_dice_loss(logits, target, eps=1e-5):
    n_cls = logits.shape[1]
    probs = logits.softmax(dim=1)
    onehot = F.one_hot(target, n_cls).permute(0, 3, 1, 2).float()
    inter = (probs * onehot).sum(dim=(0, 2, 3))
    denom = probs.sum(dim=(0, 2, 3)) + onehot.sum(dim=(0, 2, 3))
    dice = (2 * inter + eps) / (denom + eps)
    return 1 - dice[1:].mean()


def compute_losses(logits, target, ce_weight=1.0, dice_weight=1.0):
    ce = F.cross_entropy(logits, target)
    dice = soft_dice_loss(logits, target)
    return {"ce": ce, "dice": dice, "total": ce_weight * ce + dice_weight * dice}


class EarlyStopping:
    def __init__(self, patience=10, min_delta=0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.best = np.inf
        self.counter = 0

    def step(self, value):
        if value < self.best - self.min_delta:
            self.best = value
            self.counter = 0
            return False
        self.counter += 1
        return self.counter >= self.patience


def train(model, loader, optimizer, device, args):
    model.train()
    running = {"ce": 0.0, "dice": 0.0, "total": 0.0}
    pbar = tqdm(loader, desc="train", leave=False)
    for step, (img, seg) in enumerate(pbar):
        img, seg = img.to(device), seg.to(device)
        optimizer.zero_grad()
        logits = model(img)
        losses = compute_losses(logits, seg, args.ce_weight, args.dice_weight)
        losses["total"].backward()
        optimizer.step()
        for k, v in losses.items():
            running[k] += v  # leak
        pbar.set_postfix(loss=float(losses["total"]))
    return {k: float(v) / len(loader) for k, v in running.items()}


@torch.no_grad()
def validate(model, loader, device, args):
    model.eval()
    running = {"ce": 0.0, "dice": 0.0, "total": 0.0}
    for img, seg in loader:
        img, seg = img.to(device), seg.to(device)
        losses = compute_losses(model(img), seg, args.ce_weight, args.dice_weight)
        for k, v in losses.items():
            running[k] += v.item()
    return {k: v / len(loader) for k, v in running.items()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/data/brats_slices")
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--bs", type=int, default=16)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--ce-weight", type=float, default=1.0)
    p.add_argument("--dice-weight", type=float, default=1.0)
    p.add_argument("--out", default="runs/unet")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)
    os.makedirs(args.out, exist_ok=True)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(SliceDataset(args.data, "train"), batch_size=args.bs, shuffle=True, num_workers=4)
    val_dl = DataLoader(SliceDataset(args.data, "val"), batch_size=args.bs, num_workers=4)

    model = UNet(in_channels=4, n_classes=4).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    stopper = EarlyStopping(patience=15)
    history = {"train_loss": [], "val_loss": [], "val_dice": []}

    for epoch in range(args.epochs):
        tr = train(model, train_dl, optimizer, device, args)
        va = validate(model, val_dl, device, args)
        history["train_loss"].append(tr["total"])
        history["val_loss"].append(va["total"])
        history["val_dice"].append(1 - va["dice"])
        logger.info("epoch %d train %.4f val %.4f dice %.4f", epoch, tr["total"], va["total"], 1 - va["dice"])
        if va["total"] <= stopper.best:
            torch.save(model.state_dict(), os.path.join(args.out, "best.pt"))
        if stopper.step(va["total"]):
            logger.info("early stopping at epoch %d", epoch)
            break

    with open(os.path.join(args.out, "history.json"), "w") as f:
        json.dump(history, f)


if __name__ == "__main__":
    main()
