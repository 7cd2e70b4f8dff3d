"""Generic image-classification Runner (train / evaluate / checkpoint)."""
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Runner:
    def __init__(self, model, train_loader, val_loader, optimizer, scheduler=None,
                 device="cuda", work_dir="work_dirs/exp", label_smoothing=0.1):
        self.model = model.to(device)
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.device = device
        self.work_dir = work_dir
        self.criterion = nn.CrossEntropyLoss(label_smoothing=label_smoothing)
        self.best_acc = 0.0
        os.makedirs(work_dir, exist_ok=True)

    def _to_device(self, batch):
        images, targets = batch
        return images.to(self.device, non_blocking=True), targets.to(self.device, non_blocking=True)

    def _forward(self, batch):
        images, targets = self._to_device(batch)
        logits = self.model(images)
        return {"logits": logits, "loss": self.criterion(logits, targets), "targets": targets}

    def train_epoch(self, epoch, log_every=50):
        self.model.train()
        tic = time.time()
        for i, batch in enumerate(self.train_loader):
            out = self._forward(batch)
            self.optimizer.zero_grad(set_to_none=True)
            out["loss"].backward()
            self.optimizer.step()
            if i % log_every == 0:
                print(f"[{epoch}][{i}/{len(self.train_loader)}] loss={out['loss'].item():.4f} "
                      f"{(time.time() - tic) / (i + 1):.3f}s/it")
        if self.scheduler is not None:
            self.scheduler.step()

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        losses, correct, total = [], 0, 0
        for batch in self.val_loader:
            out = self._forward(batch)
            losses.append(out["loss"])
            correct += (out["logits"].argmax(dim=1) == out["targets"]).sum().item()
            total += out["targets"].numel()
        val_loss = torch.stack(losses).mean().item()
        return {"val_loss": val_loss, "val_acc": correct / max(total, 1)}

    def save(self, epoch, metrics):
        state = {"epoch": epoch, "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}
        torch.save(state, os.path.join(self.work_dir, "latest.pth"))
        if metrics["val_acc"] > self.best_acc:
            self.best_acc = metrics["val_acc"]
            torch.save(state, os.path.join(self.work_dir, "best.pth"))

    def run(self, epochs):
        for epoch in range(epochs):
            self.train_epoch(epoch)
            metrics = self.evaluate()
            print(f"epoch {epoch}: " + ", ".join(f"{k}={v:.4f}" for k, v in metrics.items()))
            self.save(epoch, metrics)
