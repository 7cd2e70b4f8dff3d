"""Knowledge-distillation wrapper as a LightningModule.

``DistillationModule`` wraps a frozen teacher and a trainable student.  The
student is optimised with a mix of hard-label cross entropy and a KL term on
temperature-softened logits.  With ``auto_temperature=True`` the distillation
temperature is re-fit at the end of every epoch so that the softened teacher
distribution hits a target entropy, using the most recent teacher logits.
"""
from __future__ import annotations

import argparse
import math
from typing import Any, Dict, List, Optional

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def _kd_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, T: float) -> torch.Tensor:
    return F.kl_div(
        F.log_softmax(student_logits / T, dim=-1),
        F.log_softmax(teacher_logits / T, dim=-1),
        reduction="batchmean",
        log_target=True,
    ) * (T * T)


def _fit_temperature(logits: torch.Tensor, target_entropy: float, lo: float = 0.5, hi: float = 20.0,
                     iters: int = 30) -> float:
    """Bisection on T so that mean entropy of softmax(logits / T) == target_entropy."""
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        p = F.softmax(logits / mid, dim=-1)
        ent = -(p * p.clamp_min(1e-12).log()).sum(-1).mean().item()
        if ent < target_entropy:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


class DistillationModule(pl.LightningModule):
    def __init__(self, student: nn.Module, teacher: nn.Module, num_classes: int, alpha: float = 0.5,
                 temperature: float = 4.0, auto_temperature: bool = True, calib_batches: int = 50,
                 lr: float = 1e-3) -> None:
        super().__init__()
        self.save_hyperparameters(ignore=["student", "teacher"])
        self.student = student
        self.teacher = teacher.eval()
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.temperature = temperature
        self._target_entropy = 0.6 * math.log(num_classes)
        self._teacher_bank: List[torch.Tensor] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.student(x)

    @torch.no_grad()
    def _teacher_forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.teacher(x)

    def training_step(self, batch, batch_idx: int) -> torch.Tensor:
        x, y = batch
        t_logits = self._teacher_forward(x)
        if self.hparams.auto_temperature:
            self._teacher_bank.append(t_logits)  # leak
        s_logits = self.student(x)
        hard = F.cross_entropy(s_logits, y)
        soft = _kd_loss(s_logits, t_logits, self.temperature)
        total = self.hparams.alpha * hard + (1 - self.hparams.alpha) * soft
        self.log_dict({"train/hard": hard, "train/soft": soft, "train/T": self.temperature},
                      on_step=True, prog_bar=True)
        return total

    def on_train_epoch_end(self) -> None:
        if not self.hparams.auto_temperature or not self._teacher_bank:
            return
        recent = torch.cat(self._teacher_bank[-self.hparams.calib_batches:])
        self.temperature = _fit_temperature(recent.float(), self._target_entropy)
        self.print(f"epoch {self.current_epoch}: distillation temperature -> {self.temperature:.3f}")

    def validation_step(self, batch, batch_idx: int) -> None:
        x, y = batch
        acc = (self.student(x).argmax(-1) == y).float().mean()
        self.log("val/acc", acc, prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.student.parameters(), lr=self.hparams.lr)

    def on_save_checkpoint(self, checkpoint: Dict[str, Any]) -> None:
        checkpoint["kd_temperature"] = self.temperature

    def on_load_checkpoint(self, checkpoint: Dict[str, Any]) -> None:
        self.temperature = checkpoint.get("kd_temperature", self.temperature)


def _mlp(width: int, depth: int, num_classes: int, in_dim: int = 64) -> nn.Sequential:
    layers: List[nn.Module] = []
    d = in_dim
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.GELU()]
        d = width
    layers.append(nn.Linear(d, num_classes))
    return nn.Sequential(*layers)


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--classes", type=int, default=100)
    args = ap.parse_args(argv)

    x = torch.randn(50_000, 64)
    y = torch.randint(0, args.classes, (50_000,))
    train = DataLoader(TensorDataset(x, y), batch_size=256, shuffle=True)
    val = DataLoader(TensorDataset(x[:5000], y[:5000]), batch_size=512)
    module = DistillationModule(_mlp(128, 2, args.classes), _mlp(1024, 6, args.classes), args.classes)
    pl.Trainer(max_epochs=args.epochs, accelerator="auto", log_every_n_steps=20).fit(module, train, val)


if __name__ == "__main__":
    main()
