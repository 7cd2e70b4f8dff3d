import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, name, fmt=":f"):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        if torch.is_tensor(val):
            val = val.item()
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        fmtstr = "{name} {val" + self.fmt + "} ({avg" + self.fmt + "})"
        return fmtstr.format(**self.__dict__)


def train_one_epoch(loader, model, optimizer, epoch, args):
    batch_time = AverageMeter("Time", ":6.3f")
    losses = AverageMeter("Loss", ":.4e")
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(loader):
        images = images.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output = model(images)
        loss = F.cross_entropy(output, target)
        losses.update(loss, images.size(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        batch_time.update(time.time() - end)
        end = time.time()
        if i % args.print_freq == 0:
            print(f"Epoch [{epoch}][{i}/{len(loader)}] {batch_time} {losses}")
    return losses.avg


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=90)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--print-freq", type=int, default=10)
    args = p.parse_args()
    model = nn.Sequential(nn.Conv2d(3, 32, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loader = [(torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,))) for _ in range(50)]
    for epoch in range(args.epochs):
        train_one_epoch(loader, model, opt, epoch, args)


if __name__ == "__main__":
    main()
