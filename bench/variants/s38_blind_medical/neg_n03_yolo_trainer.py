"""Single-stage detector trainer with a loss dictionary and smoothed meters."""
import argparse
import datetime
import time
from collections import defaultdict, deque

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from data import build_dataset, collate_fn
from model import build_detector


class SmoothedValue:
    def __init__(self, window_size=20):
        self.deque = deque(maxlen=window_size)
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        if isinstance(value, torch.Tensor):
            value = value.item()
        self.deque.append(value)
        self.count += n
        self.total += value * n

    @property
    def median(self):
        d = sorted(self.deque)
        return d[len(d) // 2] if d else 0.0

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)


class MetricLogger:
    def __init__(self, delimiter="  "):
        self.meters = defaultdict(SmoothedValue)
        self.delimiter = delimiter

    def update(self, **kwargs):
        for k, v in kwargs.items():
            self.meters[k].update(v)

    def __str__(self):
        return self.delimiter.join(f"{k}: {m.median:.4f} ({m.global_avg:.4f})"
                                   for k, m in self.meters.items())


def train_one_epoch(model, criterion, optimizer, loader, device, epoch, scaler, print_freq=20):
    model.train()
    logger = MetricLogger()
    epoch_loss = 0.0
    start = time.time()
    for step, (images, targets) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]

        with torch.cuda.amp.autocast():
            outputs = model(images)
            loss_dict = criterion(outputs, targets)
            weights = criterion.weight_dict
            losses = sum(loss_dict[k] * weights[k] for k in loss_dict if k in weights)

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(losses).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        scaler.step(optimizer)
        scaler.update()

        loss_value = losses.item()
        epoch_loss += loss_value
        logger.update(loss=loss_value, **{k: v.detach() for k, v in loss_dict.items()})
        logger.update(lr=optimizer.param_groups[0]["lr"])

        if step % print_freq == 0:
            print(f"Epoch [{epoch}] [{step}/{len(loader)}] {logger}")

    elapsed = datetime.timedelta(seconds=int(time.time() - start))
    print(f"Epoch [{epoch}] total time {elapsed}, mean loss {epoch_loss / max(len(loader), 1):.4f}")
    return {k: m.global_avg for k, m in logger.meters.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-path", default="/datasets/coco")
    parser.add_argument("--arch", default="yolox_s")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--output", default="checkpoints")
    args = parser.parse_args()

    device = torch.device("cuda")
    model, criterion = build_detector(args.arch)
    model.to(device)
    criterion.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.937, weight_decay=5e-4, nesterov=True)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, [args.epochs * 2 // 3], 0.1)
    scaler = torch.cuda.amp.GradScaler()

    dataset = build_dataset(args.data_path, "train")
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, collate_fn=collate_fn, pin_memory=True)

    history = []
    for epoch in range(args.epochs):
        stats = train_one_epoch(model, criterion, optimizer, loader, device, epoch, scaler)
        scheduler.step()
        history.append(stats)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "epoch": epoch, "history": history}, f"{args.output}/last.pth")


if __name__ == "__main__":
    main()
