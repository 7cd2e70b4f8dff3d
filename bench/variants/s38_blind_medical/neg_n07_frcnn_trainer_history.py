import argparse
import csv
import math
import os
import sys
import time
from collections import defaultdict

import torch
from torch.utils.data import DataLoader
from torchvision.models.detection import maskrcnn_resnet50_fpn

from detection.datasets import CocoDetection, collate_fn, get_transform


class LossTracker:
    """Keeps per-step scalar losses on the host; written to CSV at epoch end."""

    def __init__(self):
        self.rows = []
        self.sums = defaultdict(float)
        self.count = 0

    def update(self, step, loss_dict):
        values = {k: v.item() for k, v in loss_dict.items()}
        values["step"] = step
        self.rows.append(values)
        for k, v in values.items():
            if k != "step":
                self.sums[k] += v
        self.count += 1

    def averages(self):
        return {k: s / max(self.count, 1) for k, s in self.sums.items()}

    def flush(self, path):
        if not self.rows:
            return
        write_header = not os.path.exists(path)
        with open(path, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(self.rows[0].keys()))
            if write_header:
                w.writeheader()
            w.writerows(self.rows)
        self.rows.clear()
        self.sums.clear()
        self.count = 0


def train_one_epoch(model, optimizer, loader, device, epoch, tracker, step, print_freq=20):
    model.train()
    warmup = None
    if epoch == 0:
        iters = min(1000, len(loader) - 1)
        warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1e-3, total_iters=iters)
    for i, (images, targets) in enumerate(loader):
        images = [im.to(device) for im in images]
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
        loss_dict = model(images, targets)
        losses = sum(loss_dict.values())
        loss_value = losses.item()
        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training; {loss_dict}")
            sys.exit(1)
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        if warmup is not None:
            warmup.step()
        tracker.update(step, loss_dict)
        step += 1
        if i % print_freq == 0:
            avg = tracker.averages()
            print(f"[{epoch}][{i}/{len(loader)}] loss {loss_value:.4f} "
                  + " ".join(f"{k}={v:.3f}" for k, v in avg.items()))
    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--img-dir", required=True)
    ap.add_argument("--ann", required=True)
    ap.add_argument("--num-classes", type=int, default=91)
    ap.add_argument("--epochs", type=int, default=26)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--batch-size", type=int, default=2)
    ap.add_argument("--out", default="output")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda")
    model = maskrcnn_resnet50_fpn(num_classes=args.num_classes).to(device)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad],
                                lr=args.lr, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.MultiStepLR(optimizer, [16, 22], 0.1)
    ds = CocoDetection(args.img_dir, args.ann, transforms=get_transform(train=True))
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=4,
                        collate_fn=collate_fn)

    tracker = LossTracker()
    step = 0
    for epoch in range(args.epochs):
        t0 = time.time()
        step = train_one_epoch(model, optimizer, loader, device, epoch, tracker, step)
        sched.step()
        print(f"epoch {epoch} averages {tracker.averages()} ({time.time() - t0:.0f}s)")
        tracker.flush(os.path.join(args.out, "losses.csv"))
        torch.save(model.state_dict(), os.path.join(args.out, f"model_{epoch}.pth"))


if __name__ == "__main__":
    main()
