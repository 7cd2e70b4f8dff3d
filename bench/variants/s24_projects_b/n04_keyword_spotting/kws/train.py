"""Train a depthwise-separable CNN keyword spotter."""
from __future__ import annotations

import argparse
import logging

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from kws.data import SpeechCommands, pad_collate
from kws.data.transforms import BatchSpecAugment

logger = logging.getLogger("kws")


def ds_block(c_in, c_out, stride=1):
    return nn.Sequential(
        nn.Conv2d(c_in, c_in, 3, stride, 1, groups=c_in, bias=False), nn.BatchNorm2d(c_in),
        nn.ReLU(True), nn.Conv2d(c_in, c_out, 1, bias=False), nn.BatchNorm2d(c_out),
        nn.ReLU(True))


class DSCNN(nn.Module):
    def __init__(self, n_classes: int = 12, width: int = 64):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, width, (10, 4), (2, 2), (5, 1), bias=False),
                                  nn.BatchNorm2d(width), nn.ReLU(True))
        self.blocks = nn.Sequential(*[ds_block(width, width) for _ in range(4)])
        self.fc = nn.Linear(width, n_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x.unsqueeze(1)))
        return self.fc(x.mean(dim=(2, 3)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--workers", type=int, default=8)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = "cuda"

    train_dl = DataLoader(SpeechCommands(args.root, "train"), args.batch_size, shuffle=True,
                          num_workers=args.workers, collate_fn=pad_collate, pin_memory=True,
                          persistent_workers=True)
    val_dl = DataLoader(SpeechCommands(args.root, "validation"), 512,
                        num_workers=args.workers, collate_fn=pad_collate)
    model = DSCNN().to(device)
    augment = BatchSpecAugment(device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, epochs=args.epochs,
                                                steps_per_epoch=len(train_dl))
    crit = nn.CrossEntropyLoss(label_smoothing=0.1)

    for epoch in range(args.epochs):
        model.train()
        augment.train()
        tot, n = 0.0, 0
        for feats, labels in train_dl:
            feats = augment(feats.to(device, non_blocking=True))
            labels = labels.to(device, non_blocking=True)
            loss = crit(model(feats), labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            tot += loss.item() * labels.size(0)
            n += labels.size(0)
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for feats, labels in val_dl:
                pred = model(feats.to(device)).argmax(1).cpu()
                correct += (pred == labels).sum().item()
                total += labels.numel()
        logger.info("epoch %d loss %.4f val acc %.2f%%", epoch, tot / n, 100 * correct / total)


if __name__ == "__main__":
    main()
