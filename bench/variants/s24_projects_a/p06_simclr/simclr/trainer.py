"""Training loop for SimCLR pre-training."""
import logging
import math
import os

import torch

from .model import nt_xent

log = logging.getLogger(__name__)


def cosine_lr(step: int, total: int, base_lr: float, warmup: int) -> float:
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return base_lr * 0.5 * (1 + math.cos(math.pi * progress))


class SimCLRTrainer:
    def __init__(self, model, optimizer, logger, cfg, device):
        self.model = model
        self.optimizer = optimizer
        self.logger = logger
        self.cfg = cfg
        self.device = device
        self.scaler = torch.cuda.amp.GradScaler(enabled=cfg.amp)
        self.global_step = 0

    def _set_lr(self, total_steps: int) -> float:
        lr = cosine_lr(self.global_step, total_steps, self.cfg.lr, self.cfg.warmup_steps)
        for g in self.optimizer.param_groups:
            g["lr"] = lr
        return lr

    def train_step(self, x1, x2, total_steps: int) -> float:
        lr = self._set_lr(total_steps)
        with torch.autocast("cuda", enabled=self.cfg.amp):
            h1, z1 = self.model(x1)
            _, z2 = self.model(x2)
            loss = nt_xent(z1, z2, self.cfg.temperature)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()

        self.logger.set_step(self.global_step)
        if self.global_step % self.cfg.log_every == 0:
            self.logger.scalars({"loss": loss.item(), "lr": lr}, prefix="train/")
        # representation-collapse diagnostic: per-dimension std of normalised features
        self.logger.defer("diag/feature_std",
                          lambda: torch.nn.functional.normalize(h1.float(), dim=1).std(0).mean().item())
        self.global_step += 1
        return loss.item()

    def fit(self, loader, epochs: int) -> None:
        total_steps = epochs * len(loader)
        self.model.train()
        for epoch in range(epochs):
            running, n = 0.0, 0
            for (x1, x2), _ in loader:
                x1 = x1.to(self.device, non_blocking=True)
                x2 = x2.to(self.device, non_blocking=True)
                running += self.train_step(x1, x2, total_steps)
                n += 1
            log.info("epoch %d  loss %.4f", epoch, running / max(n, 1))
            self.save(os.path.join(self.cfg.out, "last.pt"), epoch)

    def save(self, path: str, epoch: int) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        torch.save({"model": self.model.state_dict(),
                    "optimizer": self.optimizer.state_dict(),
                    "epoch": epoch, "step": self.global_step}, path)
