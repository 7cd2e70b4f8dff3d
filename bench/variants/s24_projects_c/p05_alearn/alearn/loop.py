"""Active learning loop: train -> query -> label -> repeat.

    python -m alearn.loop --strategy bald --rounds 20 --budget 500
"""
import argparse
import json
import logging
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms

from alearn import strategies

logger = logging.getLogger("alearn")


class SmallCNN(nn.Module):
    def __init__(self, n_classes: int = 10, p_drop: float = 0.3):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(128, 256, 3, padding=1), nn.BatchNorm2d(256), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.drop = nn.Dropout(p_drop)
        self.fc = nn.Linear(256, n_classes)

    def forward(self, x):
        return self.fc(self.drop(self.features(x).flatten(1)))


def train_model(dataset, labeled, epochs, device):
    model = SmallCNN().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    dl = DataLoader(Subset(dataset, labeled.tolist()), batch_size=128, shuffle=True, num_workers=4)
    for _ in range(epochs):
        model.train()
        for x, y in dl:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
    return model


@torch.no_grad()
def evaluate(model, test_set, device):
    model.eval()
    correct = 0
    for x, y in DataLoader(test_set, batch_size=1024, num_workers=4):
        correct += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
    return correct / len(test_set)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--strategy", default="bald")
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--init", type=int, default=1000)
    p.add_argument("--budget", type=int, default=500)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--out", default="results")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = "cuda"

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.49, 0.48, 0.45), (0.25, 0.24, 0.26))])
    train_set = datasets.CIFAR10("data", train=True, download=True, transform=tf)
    test_set = datasets.CIFAR10("data", train=False, download=True, transform=tf)

    rng = np.random.default_rng(0)
    labeled = rng.choice(len(train_set), args.init, replace=False)
    pool = np.setdiff1d(np.arange(len(train_set)), labeled)
    strategy = strategies.get_strategy(args.strategy, batch_size=2048, device=device)

    history = []
    for rnd in range(args.rounds):
        model = train_model(train_set, labeled, args.epochs, device)
        acc = evaluate(model, test_set, device)
        history.append({"round": rnd, "n_labeled": int(len(labeled)), "acc": acc})
        logger.info("round %d: %d labeled, test acc %.4f", rnd, len(labeled), acc)
        picked = strategy.query(model, train_set, pool, args.budget)
        labeled = np.concatenate([labeled, picked])
        pool = np.setdiff1d(pool, picked)

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"{args.strategy}.json"), "w") as f:
        json.dump(history, f, indent=2)


if __name__ == "__main__":
    main()
