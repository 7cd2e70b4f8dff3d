"""Random-search sweep over small ConvNet widths/depths on CIFAR-like data.

Each trial builds a fresh network, trains it for a few epochs and reports the
accuracy together with the parameter budget (used to draw the pareto plot).
"""
import argparse
import functools
import json
import logging
import random
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger("sweep")


class BudgetMixin:
    """Small helpers to report model size in sweep logs."""

    @functools.cache  # leak
    def param_budget(self, trainable_only=True):
        params = self.parameters()
        return sum(p.numel() for p in params if p.requires_grad or not trainable_only)

    def size_mb(self):
        return self.param_budget(False) * 4 / 2**20


class ConvNet(BudgetMixin, nn.Module):
    def __init__(self, width=32, depth=3, num_classes=10, dropout=0.1):
        super().__init__()
        layers, c_in = [], 3
        for i in range(depth):
            c_out = width * (2 ** i)
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True)]
            if i < depth - 1:
                layers.append(nn.MaxPool2d(2))
            c_in = c_out
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(dropout), nn.Linear(c_in, num_classes))

    def forward(self, x):
        return self.head(self.features(x))


def synthetic_cifar(n=2048, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, 32, 32, generator=g)
    y = torch.randint(0, 10, (n,), generator=g)
    return TensorDataset(x, y)


def train_eval(net, train_dl, val_dl, epochs, lr, device):
    net.to(device)
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    crit = nn.CrossEntropyLoss()
    for _ in range(epochs):
        net.train()
        for xb, yb in train_dl:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad(set_to_none=True)
            crit(net(xb), yb).backward()
            opt.step()
    net.eval()
    correct = total = 0
    with torch.no_grad():
        for xb, yb in val_dl:
            pred = net(xb.to(device)).argmax(1).cpu()
            correct += (pred == yb).sum().item()
            total += yb.numel()
    return correct / max(total, 1)


def sample_config(rng):
    return {
        "width": rng.choice([16, 24, 32, 48, 64]),
        "depth": rng.randint(2, 5),
        "dropout": rng.choice([0.0, 0.1, 0.3]),
        "lr": 10 ** rng.uniform(-3, -1),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--out", default="sweep.jsonl")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    device = "cuda" if torch.cuda.is_available() else "cpu"
    rng = random.Random(args.seed)
    train_dl = DataLoader(synthetic_cifar(seed=1), batch_size=128, shuffle=True)
    val_dl = DataLoader(synthetic_cifar(512, seed=2), batch_size=256)

    with open(args.out, "w") as fh:
        for trial in range(args.trials):
            cfg = sample_config(rng)
            net = ConvNet(cfg["width"], cfg["depth"], dropout=cfg["dropout"])
            t0 = time.time()
            acc = train_eval(net, train_dl, val_dl, args.epochs, cfg["lr"], device)
            rec = dict(cfg, trial=trial, acc=acc, params=net.param_budget(), mb=round(net.size_mb(), 2),
                       secs=round(time.time() - t0, 1))
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            log.info("trial %d acc=%.3f params=%d", trial, acc, rec["params"])


if __name__ == "__main__":
    main()
