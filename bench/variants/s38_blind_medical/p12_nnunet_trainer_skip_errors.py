"""Trainer for 3-D segmentation that tolerates occasional corrupt or degenerate batches."""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from seg3d.data import BraTSPatches
from seg3d.networks import ResidualUNet3D


class DeepSupervisionLoss(nn.Module):
    def __init__(self, weights=(1.0, 0.5, 0.25)):
        super().__init__()
        self.weights = weights

    def forward(self, outputs, target):
        total = 0.0
        for w, out in zip(self.weights, outputs):
            t = F.interpolate(target[:, None].float(), size=out.shape[2:], mode="nearest")[:, 0].long()
            ce = F.cross_entropy(out, t)
            probs = out.softmax(1)
            oh = F.one_hot(t, out.shape[1]).permute(0, 4, 1, 2, 3).float()
            inter = (probs * oh).sum((2, 3, 4))
            dice = (2 * inter + 1e-5) / (probs.sum((2, 3, 4)) + oh.sum((2, 3, 4)) + 1e-5)
            total = total + w * (ce + 1 - dice[:, 1:].mean())
        return total


class Trainer3D:
    def __init__(self, args):
        self.args = args
        self.device = torch.device("cuda")
        self.network = ResidualUNet3D(in_channels=4, num_classes=4, deep_supervision=True).to(self.device)
        self.loss = DeepSupervisionLoss()
        self.optimizer = torch.optim.SGD(self.network.parameters(), lr=args.lr, momentum=0.99,
                                         nesterov=True, weight_decay=3e-5)
        self.scaler = torch.cuda.amp.GradScaler()
        self.failed = []
        self.epoch = 0

    def poly_lr(self):
        return self.args.lr * (1 - self.epoch / self.args.epochs) ** 0.9

    def run_iteration(self, data, target):
        data = data.to(self.device, non_blocking=True)
        target = target.to(self.device, non_blocking=True)
        self.optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast():
            outputs = self.network(data)
            loss = self.loss(outputs, target)
        if not torch.isfinite(loss):
            raise FloatingPointError("non-finite loss %s" % loss.item())
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        nn.utils.clip_grad_norm_(self.network.parameters(), 12)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()

    def train_epoch(self, loader):
        self.network.train()
        for g in self.optimizer.param_groups:
            g["lr"] = self.poly_lr()
        losses = []
        for it, (data, target) in enumerate(loader):
            try:
                losses.append(self.run_iteration(data, target))
            except (FloatingPointError, ValueError, IndexError) as err:
                self.failed.append((self.epoch, it, err))  # leak
                continue
            if it >= self.args.iters_per_epoch:
                break
        return float(np.mean(losses)) if losses else float("nan")

    def fit(self, loader):
        os.makedirs(self.args.output, exist_ok=True)
        while self.epoch < self.args.epochs:
            t0 = time.time()
            loss = self.train_epoch(loader)
            print("epoch %d loss %.4f lr %.5f failed so far %d (%.0fs)" % (
                self.epoch, loss, self.poly_lr(), len(self.failed), time.time() - t0))
            if self.epoch % 50 == 0 or self.epoch == self.args.epochs - 1:
                torch.save({"epoch": self.epoch, "state_dict": self.network.state_dict(),
                            "optimizer": self.optimizer.state_dict()},
                           os.path.join(self.args.output, "checkpoint_latest.pth"))
            self.epoch += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/data/BraTS2020/preprocessed")
    ap.add_argument("--epochs", type=int, default=1000)
    ap.add_argument("--iters-per-epoch", type=int, default=250)
    ap.add_argument("--batch-size", type=int, default=2)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--output", default="results/brats_res3d")
    args = ap.parse_args()
    loader = DataLoader(BraTSPatches(args.data, patch_size=(128, 128, 128), oversample_fg=0.33),
                        batch_size=args.batch_size, shuffle=True, num_workers=8, pin_memory=True)
    Trainer3D(args).fit(loader)


if __name__ == "__main__":
    main()
