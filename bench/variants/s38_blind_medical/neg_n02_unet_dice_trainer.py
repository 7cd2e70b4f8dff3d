import argparse
import logging
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger(__name__)


def dice_per_class(pred, target, num_classes, eps=1e-6):
    """Hard Dice on label maps, foreground classes only."""
    scores = []
    for c in range(1, num_classes):
        p = pred == c
        t = target == c
        inter = (p & t).sum().float()
        denom = p.sum().float() + t.sum().float()
        scores.append((2 * inter + eps) / (denom + eps))
    return torch.stack(scores)


class DiceMeter:
    def __init__(self, num_classes):
        self.num_classes = num_classes
        self.reset()

    def reset(self):
        self.sum = np.zeros(self.num_classes - 1)
        self.count = 0

    def update(self, scores):
        self.sum += scores.cpu().numpy()
        self.count += 1

    @property
    def mean(self):
        return self.sum / max(self.count, 1)


class SegTrainer:
    def __init__(self, net, cfg):
        self.cfg = cfg
        self.device = torch.device(cfg.device)
        self.net = net.to(self.device)
        self.opt = torch.optim.SGD(net.parameters(), lr=cfg.lr, momentum=0.99, nesterov=True)
        self.meter = DiceMeter(cfg.num_classes)
        self.train_losses = []

    def _step(self, x, y):
        logits = self.net(x)
        probs = logits.softmax(1)
        onehot = F.one_hot(y, self.cfg.num_classes).permute(0, 3, 1, 2).float()
        inter = (probs * onehot).sum((0, 2, 3))
        dice = (2 * inter + 1e-5) / (probs.sum((0, 2, 3)) + onehot.sum((0, 2, 3)) + 1e-5)
        return F.cross_entropy(logits, y) + (1 - dice[1:].mean())

    def train_one_epoch(self, loader):
        self.net.train()
        self.train_losses.clear()
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            loss = self._step(x, y)
            self.opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), 12.0)
            self.opt.step()
            self.train_losses.append(loss.detach().item())
        return float(np.mean(self.train_losses))

    @torch.no_grad()
    def evaluate(self, loader):
        self.net.eval()
        self.meter.reset()
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            pred = self.net(x).argmax(1)
            self.meter.update(dice_per_class(pred, y, self.cfg.num_classes))
        return self.meter.mean

    def run(self):
        train_loader, val_loader = make_loaders(self.cfg)
        for epoch in range(self.cfg.epochs):
            for g in self.opt.param_groups:
                g["lr"] = self.cfg.lr * (1 - epoch / self.cfg.epochs) ** 0.9
            tl = self.train_one_epoch(train_loader)
            dice = self.evaluate(val_loader)
            logger.info("epoch %d loss %.4f dice %s mean %.4f", epoch, tl,
                        np.round(dice, 4).tolist(), dice.mean())


def make_loaders(cfg):
    data = np.load(cfg.data)
    x = torch.from_numpy(data["images"]).float().unsqueeze(1)
    y = torch.from_numpy(data["labels"]).long()
    n_val = int(len(x) * 0.2)
    tr = TensorDataset(x[n_val:], y[n_val:])
    va = TensorDataset(x[:n_val], y[:n_val])
    return (DataLoader(tr, batch_size=cfg.batch_size, shuffle=True, num_workers=2, drop_last=True),
            DataLoader(va, batch_size=cfg.batch_size, num_workers=2))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="slices.npz")
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--batch-size", type=int, default=12)
    ap.add_argument("--num-classes", type=int, default=4)
    ap.add_argument("--device", default="cuda")
    cfg = ap.parse_args()
    net = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
        nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
        nn.Conv2d(32, cfg.num_classes, 1),
    )
    SegTrainer(net, cfg).run()
