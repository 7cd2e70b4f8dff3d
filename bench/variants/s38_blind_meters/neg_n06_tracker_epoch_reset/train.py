import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from tracker import tracker


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--bs", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--clip", type=float, default=2.0)
    p.add_argument("--label_smoothing", type=float, default=0.1)
    p.add_argument("--save", type=str, default="tracker.json")
    return p.parse_args()


class ResBlock(nn.Module):
    def __init__(self, c):
        super(ResBlock, self).__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


class SmallResNet(nn.Module):
    def __init__(self, num_classes=100, width=64):
        super(SmallResNet, self).__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(width), nn.ReLU())
        self.layers = nn.Sequential(ResBlock(width), nn.MaxPool2d(2), ResBlock(width), nn.MaxPool2d(2))
        self.fc = nn.Linear(width, num_classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def warmup_cosine(step, total, warmup=500):
    if step < warmup:
        return step / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))


def main():
    args = get_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    ds = TensorDataset(torch.randn(10000, 3, 32, 32), torch.randint(0, 100, (10000,)))
    loader = DataLoader(ds, batch_size=args.bs, shuffle=True, drop_last=True)

    model = SmallResNet().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    total_steps = args.epochs * len(loader)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: warmup_cosine(s, total_steps))

    for epoch in range(args.epochs):
        model.train()
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.cross_entropy(logits, y, label_smoothing=args.label_smoothing)
            opt.zero_grad()
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            opt.step()
            sched.step()

            tracker.add("train/loss", loss.detach())
            tracker.add("train/grad_norm", grad_norm)
            tracker.add("train/lr", sched.get_last_lr()[0])

        means = tracker.end_epoch()
        print("epoch %d loss %.4f grad_norm %.3f lr %.5f (%.0fs)" % (
            epoch, means["train/loss"], means["train/grad_norm"],
            means["train/lr"], tracker.elapsed()))

    tracker.to_json(args.save)


if __name__ == "__main__":
    main()
