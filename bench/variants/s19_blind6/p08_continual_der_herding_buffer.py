"""Class-incremental learning with logit replay and herding-selected exemplars.

Each task: train on the current classes while replaying stored exemplars (images and the
logits the network produced for them); at the end of the task the candidates seen during
the task are reduced to `mem_per_class` exemplars per class with herding.
"""
import argparse
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

from backbones import resnet32
from datasets import SplitCIFAR100

logger = logging.getLogger("cil")


class IncrementalNet(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.backbone = resnet32()
        self.fc = nn.Linear(self.backbone.out_dim, num_classes)

    def forward(self, x):
        feats = self.backbone(x)
        return {"features": feats, "logits": self.fc(feats)}


class ExemplarBuffer:
    def __init__(self, mem_per_class):
        self.mem_per_class = mem_per_class
        self.images, self.labels, self.logits = [], [], []
        self._cand = {"images": [], "labels": [], "logits": [], "features": []}

    def stage(self, images, labels, outputs):
        self._cand["images"].append(images.cpu())
        self._cand["labels"].append(labels.cpu())
        self._cand["logits"].append(outputs["logits"])  # leak
        self._cand["features"].append(outputs["features"].detach())

    def sample(self, n, device):
        if not self.images:
            return None
        idx = torch.randint(0, len(self.images), (n,))
        x = torch.stack([self.images[i] for i in idx]).to(device)
        y = torch.tensor([self.labels[i] for i in idx], device=device)
        z = torch.stack([self.logits[i] for i in idx]).to(device)
        return x, y, z

    def consolidate(self):
        images = torch.cat(self._cand["images"])
        labels = torch.cat(self._cand["labels"])
        logits = torch.cat(self._cand["logits"])
        feats = F.normalize(torch.cat(self._cand["features"]), dim=1)
        for c in labels.unique().tolist():
            mask = (labels == c).nonzero().squeeze(1)
            chosen = herding(feats[mask], self.mem_per_class)
            for i in mask[chosen].tolist():
                self.images.append(images[i])
                self.labels.append(c)
                self.logits.append(logits[i].detach().cpu())
        self._cand = {k: [] for k in self._cand}


def herding(feats, m):
    mu = feats.mean(0)
    selected, running = [], torch.zeros_like(mu)
    for k in range(1, min(m, feats.size(0)) + 1):
        scores = ((mu - (running + feats) / k) ** 2).sum(1)
        if selected:
            scores[selected] = float("inf")
        i = int(scores.argmin())
        selected.append(i)
        running += feats[i]
    return torch.tensor(selected)


class Learner:
    def __init__(self, net, args, device):
        self.net = net
        self.args = args
        self.device = device
        self.buffer = ExemplarBuffer(args.mem_per_class)

    def observe(self, x, y, opt):
        out = self.net(x)
        loss = F.cross_entropy(out["logits"], y)
        replay = self.buffer.sample(self.args.replay_bs, self.device)
        if replay is not None:
            bx, by, bz = replay
            bout = self.net(bx)
            loss = loss + self.args.alpha * F.mse_loss(bout["logits"][:, :bz.size(1)], bz)
            loss = loss + self.args.beta * F.cross_entropy(bout["logits"], by)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item(), out

    def train_task(self, task_id, loader):
        self.net.train()
        opt = torch.optim.SGD(self.net.parameters(), lr=self.args.lr, momentum=0.9, weight_decay=5e-4)
        for epoch in range(self.args.epochs):
            for it, (x, y) in enumerate(loader):
                x, y = x.to(self.device), y.to(self.device)
                loss, out = self.observe(x, y, opt)
                if epoch == self.args.epochs - 1:
                    self.buffer.stage(x, y, out)
                if it % 50 == 0:
                    logger.info("task %d epoch %d it %d loss %.4f", task_id, epoch, it, loss)
        self.buffer.consolidate()

    @torch.no_grad()
    def evaluate(self, loader):
        self.net.eval()
        correct = total = 0
        for x, y in loader:
            pred = self.net(x.to(self.device))["logits"].argmax(1).cpu()
            correct += (pred == y).sum().item()
            total += y.numel()
        return correct / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n_tasks", type=int, default=10)
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--lr", type=float, default=0.03)
    p.add_argument("--mem_per_class", type=int, default=20)
    p.add_argument("--replay_bs", type=int, default=32)
    p.add_argument("--alpha", type=float, default=0.3)
    p.add_argument("--beta", type=float, default=0.5)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda")

    bench = SplitCIFAR100("data", n_tasks=args.n_tasks)
    learner = Learner(IncrementalNet(100).to(device), args, device)
    for t in range(args.n_tasks):
        learner.train_task(t, bench.train_loader(t, batch_size=32))
        accs = [learner.evaluate(bench.test_loader(s)) for s in range(t + 1)]
        logger.info("after task %d: avg acc %.2f", t, 100 * sum(accs) / len(accs))


if __name__ == "__main__":
    main()
