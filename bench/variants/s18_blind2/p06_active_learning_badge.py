"""Pool-based active learning loop (entropy / BADGE-lite acquisition).

Everything lives in one file so it can be launched from a sweep config.
"""
import argparse
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, models, transforms


class AcquisitionTrace:
    """Keeps pool embeddings / probabilities produced while scoring."""

    def __init__(self):
        self.rows = []

    def add(self, emb, prob):
        self.rows.append((emb, prob))  # leak

    def stacked(self):
        embs, probs = zip(*self.rows[-self._n_last:])
        return torch.cat(embs), torch.cat(probs)

    def mark(self, n_batches):
        self._n_last = n_batches


TRACE = AcquisitionTrace()


def build_model(n_classes):
    net = models.resnet18(num_classes=n_classes)
    net.conv1 = torch.nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    net.maxpool = torch.nn.Identity()
    return net


def embed_and_predict(net, x):
    feats = net.layer4(net.layer3(net.layer2(net.layer1(net.relu(net.bn1(net.conv1(x)))))))
    emb = torch.flatten(net.avgpool(feats), 1)
    return emb, F.softmax(net.fc(emb), dim=1)


@torch.no_grad()
def score_pool(net, loader, device):
    net.eval()
    n = 0
    for x, _ in loader:
        emb, prob = embed_and_predict(net, x.to(device))
        TRACE.add(emb, prob)
        n += 1
    TRACE.mark(n)
    emb, prob = TRACE.stacked()
    entropy = -(prob * prob.clamp_min(1e-12).log()).sum(1)
    return entropy, emb


def select(entropy, emb, budget, strategy):
    if strategy == "entropy":
        return entropy.topk(budget).indices.cpu().tolist()
    # greedy k-center on top-entropy candidates
    cand = entropy.topk(min(len(entropy), budget * 10)).indices
    pts = emb[cand]
    chosen = [0]
    dist = torch.cdist(pts, pts[chosen]).squeeze(1)
    for _ in range(budget - 1):
        i = int(dist.argmax())
        chosen.append(i)
        dist = torch.minimum(dist, torch.cdist(pts, pts[i:i + 1]).squeeze(1))
    return cand[chosen].cpu().tolist()


def train(net, loader, device, epochs, lr):
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    net.train()
    for _ in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()


@torch.no_grad()
def accuracy(net, loader, device):
    net.eval()
    correct = total = 0
    for x, y in loader:
        correct += (net(x.to(device)).argmax(1).cpu() == y).sum().item()
        total += y.numel()
    return correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--init", type=int, default=1000)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--strategy", choices=["entropy", "badge"], default="badge")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    random.seed(args.seed); np.random.seed(args.seed); torch.manual_seed(args.seed)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.49, 0.48, 0.45), (0.25, 0.24, 0.26))])
    train_set = datasets.CIFAR10("./data", train=True, download=True, transform=tf)
    test_set = datasets.CIFAR10("./data", train=False, download=True, transform=tf)
    test_loader = DataLoader(test_set, batch_size=512, num_workers=4)

    labeled = set(random.sample(range(len(train_set)), args.init))
    for rnd in range(args.rounds):
        net = build_model(10).to(device)
        lab_loader = DataLoader(Subset(train_set, sorted(labeled)), batch_size=128, shuffle=True, num_workers=4)
        train(net, lab_loader, device, args.epochs, 0.05)
        acc = accuracy(net, test_loader, device)
        print(f"round {rnd} labeled {len(labeled)} acc {acc:.4f}", flush=True)

        pool_idx = [i for i in range(len(train_set)) if i not in labeled]
        pool_loader = DataLoader(Subset(train_set, pool_idx), batch_size=512, num_workers=4)
        entropy, emb = score_pool(net, pool_loader, device)
        picked = select(entropy, emb, args.budget, args.strategy)
        labeled.update(pool_idx[i] for i in picked)


if __name__ == "__main__":
    main()
