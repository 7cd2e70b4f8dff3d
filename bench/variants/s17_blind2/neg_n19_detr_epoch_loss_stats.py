"""DETR-style detector training with gradient accumulation and per-term epoch statistics."""
from collections import defaultdict

import torch
import torch.nn as nn


class DetectionRunner:
    def __init__(self, model, criterion, loader, weight_dict, lr=1e-4, lr_backbone=1e-5,
                 accum_steps=4, clip_max_norm=0.1, device="cuda"):
        self.model = model.to(device)
        self.criterion = criterion.to(device)
        self.loader = loader
        self.weight_dict = weight_dict
        self.accum_steps = accum_steps
        self.clip_max_norm = clip_max_norm
        self.device = device
        param_dicts = [
            {"params": [p for n, p in model.named_parameters() if "backbone" not in n and p.requires_grad]},
            {"params": [p for n, p in model.named_parameters() if "backbone" in n and p.requires_grad],
             "lr": lr_backbone},
        ]
        self.optimizer = torch.optim.AdamW(param_dicts, lr=lr, weight_decay=1e-4)
        self.lr_scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, 200)
        self.epoch_losses = defaultdict(float)
        self.num_iters = 0
        self.accum_loss = 0.0

    def _update_epoch_stats(self, loss_dict):
        for name, value in loss_dict.items():
            if name in self.weight_dict:
                self.epoch_losses[name] += value.item() * self.weight_dict[name]
        self.num_iters += 1

    def _train_iter(self, samples, targets, i):
        outputs = self.model(samples)
        loss_dict = self.criterion(outputs, targets)
        loss = sum(loss_dict[k] * self.weight_dict[k] for k in loss_dict if k in self.weight_dict)
        self.accum_loss = self.accum_loss + loss / self.accum_steps
        if (i + 1) % self.accum_steps == 0:
            self.accum_loss.backward()
            self.accum_loss = 0.0
            if self.clip_max_norm > 0:
                nn.utils.clip_grad_norm_(self.model.parameters(), self.clip_max_norm)
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
        self._update_epoch_stats(loss_dict)
        return loss.item()

    def train_one_epoch(self, epoch, print_freq=50):
        self.model.train()
        self.criterion.train()
        self.epoch_losses = defaultdict(float)
        self.num_iters = 0
        self.accum_loss = 0.0
        for i, (samples, targets) in enumerate(self.loader):
            samples = samples.to(self.device)
            targets = [{k: v.to(self.device) for k, v in t.items()} for t in targets]
            loss_value = self._train_iter(samples, targets, i)
            if i % print_freq == 0:
                print(f"Epoch [{epoch}] [{i}/{len(self.loader)}] loss {loss_value:.4f}")
        self.lr_scheduler.step()
        return {k: v / max(self.num_iters, 1) for k, v in self.epoch_losses.items()}

    def fit(self, epochs):
        for epoch in range(epochs):
            stats = self.train_one_epoch(epoch)
            print(f"epoch {epoch} summary: " + ", ".join(f"{k}={v:.4f}" for k, v in stats.items()))
            torch.save({"model": self.model.state_dict(), "epoch": epoch}, "checkpoint.pth")
