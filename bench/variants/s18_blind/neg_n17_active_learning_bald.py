"""Pool-based active learning with MC-dropout BALD acquisition.

Each round: train on the labelled set, score the unlabelled pool, move the
top-k samples to the labelled set.
"""
import argparse
import json
import logging
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms

logger = logging.getLogger("al")


class BayesCNN(nn.Module):
    def __init__(self, p=0.5, n_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 4), nn.ReLU(), nn.Conv2d(32, 32, 4), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25)
        )
        self.fc1 = nn.Linear(32 * 11 * 11, 128)
        self.drop = nn.Dropout(p)
        self.fc2 = nn.Linear(128, n_classes)

    def forward(self, x):
        h = self.features(x).flatten(1)
        return self.fc2(self.drop(F.relu(self.fc1(h))))


def mc_logits(net, x, T):
    """T stochastic forward passes with dropout active -> (T, B, C) log-probs."""
    net.train()  # keep dropout on
    return torch.stack([F.log_softmax(net(x), -1) for _ in range(T)])


def bald_score(logp):
    probs = logp.exp()
    mean_p = probs.mean(0)
    entropy_mean = -(mean_p * mean_p.clamp_min(1e-12).log()).sum(-1)
    mean_entropy = -(probs * logp).sum(-1).mean(0)
    return entropy_mean - mean_entropy


@torch.no_grad()
def score_pool(net, pool_loader, device, T=20):
    scores = []
    for x, _ in pool_loader:
        logp = mc_logits(net, x.to(device), T)
        scores.append(bald_score(logp).cpu())
    return torch.cat(scores).numpy()


def fit(net, loader, device, epochs=50, lr=1e-3):
    net.to(device)
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=2.5e-4)
    for _ in range(epochs):
        net.train()
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return net


@torch.no_grad()
def accuracy(net, loader, device):
    net.eval()
    hits = n = 0
    for x, y in loader:
        hits += (net(x.to(device)).argmax(-1).cpu() == y).sum().item()
        n += y.numel()
    return hits / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--acquire", type=int, default=10)
    ap.add_argument("--init", type=int, default=20)
    ap.add_argument("--out", default="al_results.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    train = datasets.MNIST("data", train=True, download=True, transform=tf)
    test = datasets.MNIST("data", train=False, download=True, transform=tf)
    test_loader = DataLoader(test, batch_size=1000)

    rng = np.random.default_rng(0)
    labelled = list(rng.choice(len(train), args.init, replace=False))
    unlabelled = sorted(set(range(len(train))) - set(labelled))
    history = []
    for r in range(args.rounds):
        net = fit(BayesCNN(), DataLoader(Subset(train, labelled), batch_size=64, shuffle=True), device)
        acc = accuracy(net, test_loader, device)
        history.append({"round": r, "n_labelled": len(labelled), "acc": acc})
        logger.info("round %d  |L|=%d  acc=%.4f", r, len(labelled), acc)

        pool_loader = DataLoader(Subset(train, unlabelled), batch_size=512)
        scores = score_pool(net, pool_loader, device)
        top = np.argsort(-scores)[: args.acquire]
        chosen = [unlabelled[i] for i in top]
        labelled.extend(chosen)
        chosen_set = set(chosen)
        unlabelled = [i for i in unlabelled if i not in chosen_set]

    Path(args.out).write_text(json.dumps(history, indent=2))


if __name__ == "__main__":
    main()
