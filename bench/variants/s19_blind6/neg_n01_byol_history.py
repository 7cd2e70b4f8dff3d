"""BYOL pre-training on CIFAR-10 / STL-10.

Official-style re-implementation of "Bootstrap Your Own Latent" (Grill et al., 2020).
The online network returns a dict with the projections and the regression loss so that
the trainer does not need to know about the target network internals.
"""
import argparse
import copy
import math
import time
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader

from augment import TwoCropsTransform, byol_augmentations


def get_args():
    p = argparse.ArgumentParser("byol")
    p.add_argument("--data", default="./data")
    p.add_argument("--arch", default="resnet18")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.2)
    p.add_argument("--tau", type=float, default=0.996)
    p.add_argument("--proj-dim", type=int, default=256)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--print-freq", type=int, default=50)
    return p.parse_args()


def mlp(in_dim, hidden, out_dim):
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden),
                         nn.ReLU(inplace=True), nn.Linear(hidden, out_dim))


class BYOL(nn.Module):
    def __init__(self, arch="resnet18", proj_dim=256, hidden=4096):
        super().__init__()
        backbone = getattr(torchvision.models, arch)(num_classes=10)
        feat_dim = backbone.fc.in_features
        backbone.fc = nn.Identity()
        self.online = nn.Sequential(backbone, mlp(feat_dim, hidden, proj_dim))
        self.predictor = mlp(proj_dim, hidden, proj_dim)
        self.target = copy.deepcopy(self.online)
        for p in self.target.parameters():
            p.requires_grad = False

    @torch.no_grad()
    def update_target(self, tau):
        for po, pt in zip(self.online.parameters(), self.target.parameters()):
            pt.data.mul_(tau).add_(po.data, alpha=1.0 - tau)

    @staticmethod
    def regression(p, z):
        p = F.normalize(p, dim=-1)
        z = F.normalize(z, dim=-1)
        return 2 - 2 * (p * z).sum(dim=-1)

    def forward(self, x1, x2):
        p1 = self.predictor(self.online(x1))
        p2 = self.predictor(self.online(x2))
        with torch.no_grad():
            z1 = self.target(x1)
            z2 = self.target(x2)
        loss = (self.regression(p1, z2) + self.regression(p2, z1)).mean()
        return {"loss": loss, "p1": p1, "z2": z2}


class History:
    """Collects per-step scalar statistics (python floats) for plotting after training."""

    def __init__(self):
        self.records = defaultdict(list)

    def update(self, stats, step):
        for name, value in stats.items():
            if hasattr(value, "item"):
                value = value.item()
            self.records[name].append(value)
        self.records["step"].append(step)

    def last(self, name, window=50):
        vals = self.records[name][-window:]
        return sum(float(v) for v in vals) / max(len(vals), 1)


class Trainer:
    def __init__(self, model, optimizer, loader, args, device):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.args = args
        self.device = device
        self.history = History()
        self.global_step = 0
        self.total_steps = args.epochs * len(loader)

    def tau(self):
        k = self.global_step / self.total_steps
        return 1 - (1 - self.args.tau) * (math.cos(math.pi * k) + 1) / 2

    def _step(self, images):
        x1, x2 = images[0].to(self.device, non_blocking=True), images[1].to(self.device, non_blocking=True)
        out = self.model(x1, x2)
        self.optimizer.zero_grad(set_to_none=True)
        out["loss"].backward()
        self.optimizer.step()
        self.model.update_target(self.tau())
        with torch.no_grad():
            std = F.normalize(out["p1"], dim=-1).std(dim=0).mean()
        return {"loss": out["loss"], "collapse_std": std}

    def train_epoch(self, epoch):
        self.model.train()
        t0 = time.time()
        for i, (images, _) in enumerate(self.loader):
            stats = self._step(images)
            self.history.update(stats, self.global_step)
            self.global_step += 1
            if i % self.args.print_freq == 0:
                print(f"ep {epoch} it {i}/{len(self.loader)} "
                      f"loss {self.history.last('loss'):.4f} "
                      f"std {self.history.last('collapse_std'):.4f} "
                      f"({time.time() - t0:.1f}s)")

    def fit(self):
        for epoch in range(self.args.epochs):
            self.train_epoch(epoch)
            torch.save({"model": self.model.state_dict(), "epoch": epoch}, "byol_last.pth")


def main():
    args = get_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set = torchvision.datasets.CIFAR10(args.data, train=True, download=True,
                                             transform=TwoCropsTransform(byol_augmentations(32)))
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, drop_last=True, pin_memory=True)
    model = BYOL(args.arch, args.proj_dim).to(device)
    params = list(model.online.parameters()) + list(model.predictor.parameters())
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=1.5e-6)
    Trainer(model, optimizer, loader, args, device).fit()


if __name__ == "__main__":
    main()
