"""Train a small residual CNN keyword spotter."""
import argparse
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

from kwspot.data.dataset import LABELS, build_loader

log = logging.getLogger("kwspot")


class ResBlock(nn.Module):
    def __init__(self, ch: int, dilation: int):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=dilation, dilation=dilation, bias=False)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=dilation, dilation=dilation, bias=False)
        self.bn2 = nn.BatchNorm2d(ch)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class Res8(nn.Module):
    def __init__(self, n_classes: int, ch: int = 45):
        super().__init__()
        self.stem = nn.Conv2d(1, ch, 3, padding=1, bias=False)
        self.pool = nn.AvgPool2d((4, 3))
        self.blocks = nn.Sequential(*[ResBlock(ch, 1) for _ in range(3)])
        self.fc = nn.Linear(ch, n_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.stem(x.unsqueeze(1))))
        x = self.blocks(x)
        return self.fc(x.mean(dim=(2, 3)))


def run_epoch(model, loader, opt=None):
    training = opt is not None
    model.train(training)
    correct, total, loss_sum = 0, 0, 0.0
    with torch.set_grad_enabled(training):
        for x, y in loader:
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            if training:
                opt.zero_grad()
                loss.backward()
                opt.step()
            loss_sum += loss.item() * y.size(0)
            correct += (logits.argmax(1) == y).sum().item()
            total += y.size(0)
    return loss_sum / total, correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="./data")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.1)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_loader = build_loader(args.root, "training", args.batch_size, device)
    val_loader = build_loader(args.root, "validation", args.batch_size, device)
    model = Res8(len(LABELS)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.epochs)
    for epoch in range(args.epochs):
        tr_loss, tr_acc = run_epoch(model, train_loader, opt)
        va_loss, va_acc = run_epoch(model, val_loader)
        sched.step()
        log.info("epoch %d train %.4f/%.3f val %.4f/%.3f", epoch, tr_loss, tr_acc, va_loss, va_acc)
    torch.save(model.state_dict(), "res8.pt")


if __name__ == "__main__":
    main()
