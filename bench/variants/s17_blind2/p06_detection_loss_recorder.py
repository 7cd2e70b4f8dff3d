"""Mask R-CNN fine-tuning loop with a smoothed loss recorder (torchvision detection)."""
import math
import sys
import time
from collections import defaultdict

import torch
import torchvision
from torchvision.models.detection import maskrcnn_resnet50_fpn_v2


class LossRecorder:
    """Keeps per-loss-term history so the log line can show windowed medians."""

    def __init__(self, window: int = 20):
        self.window = window
        self.history = defaultdict(list)

    def update(self, loss_dict):
        for name, value in loss_dict.items():
            self.history[name].append(value.detach())  # leak

    def summary(self):
        out = {}
        for name, values in sorted(self.history.items(), key=lambda kv: kv[0]):
            recent = torch.stack(values[-self.window:])
            out[name] = recent.median().item()
        return out

    def __str__(self):
        return "  ".join(f"{k}: {v:.4f}" for k, v in self.summary().items())


def train_one_epoch(model, optimizer, data_loader, device, epoch, recorder, print_freq=20, scaler=None):
    model.train()
    lr_scheduler = None
    if epoch == 0:
        warmup_iters = min(1000, len(data_loader) - 1)
        lr_scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1e-3, total_iters=warmup_iters)
    start = time.time()
    for i, (images, targets) in enumerate(data_loader):
        images = [img.to(device) for img in images]
        targets = [{k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in t.items()} for t in targets]
        with torch.autocast("cuda", enabled=scaler is not None):
            loss_dict = model(images, targets)
            losses = sum(loss for loss in loss_dict.values())
        loss_value = losses.item()
        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training")
            sys.exit(1)
        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(losses).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            losses.backward()
            optimizer.step()
        if lr_scheduler is not None:
            lr_scheduler.step()
        recorder.update(loss_dict)
        if i % print_freq == 0:
            eta = (time.time() - start) / (i + 1) * (len(data_loader) - i - 1)
            print(f"Epoch [{epoch}] [{i}/{len(data_loader)}] eta {eta:.0f}s loss {loss_value:.4f}  {recorder}")


def main(dataset, num_classes=91, epochs=26):
    device = torch.device("cuda")
    model = maskrcnn_resnet50_fpn_v2(weights=None, num_classes=num_classes).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=0.02, momentum=0.9, weight_decay=1e-4)
    loader = torch.utils.data.DataLoader(dataset, batch_size=2, shuffle=True, num_workers=4,
                                         collate_fn=lambda batch: tuple(zip(*batch)))
    recorder = LossRecorder(window=20)
    for epoch in range(epochs):
        train_one_epoch(model, optimizer, loader, device, epoch, recorder)
        torch.save(model.state_dict(), f"model_{epoch}.pth")
    print("torchvision", torchvision.__version__)
