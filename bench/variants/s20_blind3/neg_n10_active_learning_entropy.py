"""Pool-based active learning loop (uncertainty sampling).

Each round: train on the labelled set, score the unlabelled pool, move the
`budget` most uncertain samples into the labelled set.
"""
import argparse
import logging
import random

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms
from torchvision.models import resnet18

logger = logging.getLogger("al")


class UncertaintySampler:
    """Scores pool samples; higher score = more informative."""

    strategies = ("entropy", "margin", "least_confidence")

    def __init__(self, net, device, strategy="entropy", batch_size=512, num_workers=4):
        assert strategy in self.strategies, strategy
        self.net = net
        self.device = device
        self.strategy = strategy
        self.batch_size = batch_size
        self.num_workers = num_workers

    def _score_batch(self, probs):
        if self.strategy == "entropy":
            return -(probs * probs.clamp_min(1e-12).log()).sum(1)
        if self.strategy == "margin":
            top2 = probs.topk(2, dim=1).values
            return -(top2[:, 0] - top2[:, 1])
        return 1.0 - probs.max(1).values

    def score(self, pool):
        loader = DataLoader(pool, batch_size=self.batch_size, shuffle=False,
                            num_workers=self.num_workers)
        self.net.eval()
        out = []
        for x, _ in loader:
            probs = self.net(x.to(self.device)).softmax(1)
            out.append(self._score_batch(probs).detach().cpu())
        return torch.cat(out)

    def query(self, pool, budget):
        scores = self.score(pool)
        top = scores.topk(min(budget, len(scores))).indices
        return top.cpu().tolist()


def train_round(net, labelled, device, epochs, lr):
    loader = DataLoader(labelled, batch_size=128, shuffle=True, num_workers=4, drop_last=False)
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs * len(loader))
    crit = nn.CrossEntropyLoss()
    net.train()
    for ep in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            opt.zero_grad(set_to_none=True)
            crit(net(x), y).backward()
            opt.step()
            sched.step()


@torch.no_grad()
def accuracy(net, ds, device):
    net.eval()
    correct = total = 0
    for x, y in DataLoader(ds, batch_size=1024, num_workers=4):
        correct += (net(x.to(device)).argmax(1).cpu() == y).sum().item()
        total += y.numel()
    return correct / total


def new_model(num_classes, device):
    net = resnet18(num_classes=num_classes)
    net.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    net.maxpool = nn.Identity()
    return net.to(device)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--init", type=int, default=1000)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--strategy", default="entropy", choices=UncertaintySampler.strategies)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    random.seed(args.seed); np.random.seed(args.seed); torch.manual_seed(args.seed)
    device = torch.device("cuda")
    norm = transforms.Normalize((0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261))
    train_tf = transforms.Compose([transforms.RandomCrop(32, 4), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), norm])
    eval_tf = transforms.Compose([transforms.ToTensor(), norm])
    train_aug = datasets.CIFAR10("data", train=True, download=True, transform=train_tf)
    train_plain = datasets.CIFAR10("data", train=True, transform=eval_tf)
    test = datasets.CIFAR10("data", train=False, transform=eval_tf)

    all_idx = np.random.permutation(len(train_aug))
    labelled = list(all_idx[: args.init])
    unlabelled = list(all_idx[args.init:])

    for r in range(args.rounds):
        net = new_model(10, device)
        train_round(net, Subset(train_aug, labelled), device, args.epochs, args.lr)
        acc = accuracy(net, test, device)
        logger.info("round %d | labelled %d | test acc %.4f", r, len(labelled), acc)

        sampler = UncertaintySampler(net, device, strategy=args.strategy)
        picked = sampler.query(Subset(train_plain, unlabelled), args.budget)
        chosen = {unlabelled[i] for i in picked}
        labelled.extend(sorted(chosen))
        unlabelled = [i for i in unlabelled if i not in chosen]


if __name__ == "__main__":
    main()
