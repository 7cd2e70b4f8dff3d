"""3-D segmentation trainer that skips and records degenerate batches."""
import argparse
import logging
import os
import time
import traceback

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from seg3d.data import BraTSPatches
from seg3d.networks import ResidualUNet3D

log = logging.getLogger("trainer3d")


def dice_ce(logits, target, eps=1e-5):
    ce = F.cross_entropy(logits, target)
    p = logits.softmax(1)
    oh = F.one_hot(target, logits.shape[1]).permute(0, 4, 1, 2, 3).float()
    inter = (p * oh).sum((2, 3, 4))
    dice = (2 * inter + eps) / (p.sum((2, 3, 4)) + oh.sum((2, 3, 4)) + eps)
    return ce + 1 - dice[:, 1:].mean()


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.device = torch.device(cfg.device)
        self.net = ResidualUNet3D(in_channels=4, num_classes=4).to(self.device)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=cfg.lr, momentum=0.99, nesterov=True)
        self.scaler = torch.cuda.amp.GradScaler()
        self.skipped = []
        self.epoch = 0

    def step(self, x, y):
        x, y = x.to(self.device), y.to(self.device)
        self.opt.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast():
            loss = dice_ce(self.net(x), y)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"loss={loss.item()}")
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        return loss.item()

    def train_epoch(self, loader):
        self.net.train()
        lr = self.cfg.lr * (1 - self.epoch / self.cfg.epochs) ** 0.9
        for g in self.opt.param_groups:
            g["lr"] = lr
        losses = []
        for it, (x, y) in enumerate(loader):
            try:
                losses.append(self.step(x, y))
            except (FloatingPointError, ValueError) as exc:
                self.skipped.append({"epoch": self.epoch, "iter": it,
                                     "error": f"{type(exc).__name__}: {exc}"})
                log.debug("skipped batch:\n%s", traceback.format_exc())
                self.opt.zero_grad(set_to_none=True)
            if it + 1 >= self.cfg.iters:
                break
        return float(np.mean(losses)) if losses else float("nan"), lr

    def fit(self, loader):
        os.makedirs(self.cfg.out, exist_ok=True)
        for self.epoch in range(self.cfg.epochs):
            t0 = time.time()
            loss, lr = self.train_epoch(loader)
            log.info("epoch %d loss %.4f lr %.5f skipped %d (%.0fs)", self.epoch, loss, lr,
                     len(self.skipped), time.time() - t0)
            if len(self.skipped) > 1000:
                self.skipped = self.skipped[-1000:]
            torch.save({"net": self.net.state_dict(), "epoch": self.epoch, "skipped": self.skipped},
                       os.path.join(self.cfg.out, "latest.pth"))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/data/BraTS2020/preprocessed")
    ap.add_argument("--epochs", type=int, default=500)
    ap.add_argument("--iters", type=int, default=250)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--bs", type=int, default=2)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", default="results/res3d")
    cfg = ap.parse_args()
    loader = DataLoader(BraTSPatches(cfg.data, patch_size=(128, 128, 128)), batch_size=cfg.bs,
                        shuffle=True, num_workers=8, pin_memory=True)
    Trainer(cfg).fit(loader)
