"""Multi-task dense prediction (semseg + depth + normals) with Dynamic Weight
Averaging of the task losses."""
import argparse
import logging
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger(__name__)

TASKS = ("semseg", "depth", "normals")


class DynamicWeightAverage:
    """DWA (Liu et al., 2019): weights from the rate of change of smoothed losses."""

    def __init__(self, tasks, temperature=2.0, beta=0.9):
        self.tasks = list(tasks)
        self.T = temperature
        self.beta = beta
        self.smoothed = {t: None for t in self.tasks}
        self.prev = {t: None for t in self.tasks}

    def observe(self, losses):
        for t in self.tasks:
            cur = losses[t]
            if self.smoothed[t] is None:
                self.smoothed[t] = cur
            else:
                self.smoothed[t] = self.beta * self.smoothed[t] + (1 - self.beta) * cur  # leak

    def end_epoch(self):
        for t in self.tasks:
            self.prev[t] = float(self.smoothed[t]) if self.smoothed[t] is not None else None

    def weights(self):
        if any(self.prev[t] is None or self.smoothed[t] is None for t in self.tasks):
            return {t: 1.0 for t in self.tasks}
        r = {t: float(self.smoothed[t]) / max(self.prev[t], 1e-8) for t in self.tasks}
        z = sum(math.exp(r[t] / self.T) for t in self.tasks)
        return {t: len(self.tasks) * math.exp(r[t] / self.T) / z for t in self.tasks}


class MTLNet(nn.Module):
    def __init__(self, n_classes=40):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU())
        self.heads = nn.ModuleDict({
            "semseg": nn.Conv2d(128, n_classes, 1),
            "depth": nn.Conv2d(128, 1, 1),
            "normals": nn.Conv2d(128, 3, 1),
        })

    def forward(self, x):
        f = self.backbone(x)
        return {k: h(f) for k, h in self.heads.items()}


def task_losses(pred, batch):
    return {
        "semseg": F.cross_entropy(pred["semseg"], batch["semseg"], ignore_index=255),
        "depth": F.l1_loss(pred["depth"], batch["depth"]),
        "normals": 1 - F.cosine_similarity(pred["normals"], batch["normals"], dim=1).mean(),
    }


def fake_batch(bs=8, h=96, w=128, n_classes=40):
    return {
        "image": torch.randn(bs, 3, h, w),
        "semseg": torch.randint(0, n_classes, (bs, h, w)),
        "depth": torch.rand(bs, 1, h, w),
        "normals": F.normalize(torch.randn(bs, 3, h, w), dim=1),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--iters", type=int, default=400)
    ap.add_argument("--temperature", type=float, default=2.0)
    args = ap.parse_args()

    net = MTLNet()
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    dwa = DynamicWeightAverage(TASKS, args.temperature)
    for epoch in range(args.epochs):
        w = dwa.weights()
        for it in range(args.iters):
            batch = fake_batch()
            pred = net(batch["image"])
            losses = task_losses(pred, batch)
            total = sum(w[t] * losses[t] for t in TASKS)
            opt.zero_grad()
            total.backward()
            opt.step()
            dwa.observe(losses)
        dwa.end_epoch()
        log.info("epoch %d weights %s", epoch, {k: round(v, 3) for k, v in w.items()})


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
