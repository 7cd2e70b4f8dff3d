"""Logit distillation of a small student from a frozen teacher.

The student exposes ``last_logits`` so the distillation loss and the
temperature-calibration utility can both read what the model produced.
"""
import argparse
import logging
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("distill")


class LogitExposingModule(nn.Module):
    """Base for networks whose raw logits are read by external utilities."""

    def __init__(self):
        super().__init__()
        self._last_logits: Optional[torch.Tensor] = None
        self._num_forward = 0

    @property
    def last_logits(self) -> Optional[torch.Tensor]:
        return self._last_logits

    @last_logits.setter
    def last_logits(self, value: torch.Tensor) -> None:
        # single slot: overwritten on every forward, so at most one graph is alive
        self._last_logits = value
        self._num_forward += 1

    def num_traced(self) -> int:
        return self._num_forward


class Student(LogitExposingModule):
    def __init__(self, in_dim=256, hidden=256, n_cls=100, dropout=0.1):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(hidden, hidden), nn.GELU(),
        )
        self.classifier = nn.Linear(hidden, n_cls)

    def forward(self, x):
        logits = self.classifier(self.body(x))
        self.last_logits = logits
        return logits


class Teacher(nn.Module):
    def __init__(self, in_dim=256, hidden=1024, n_cls=100):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, n_cls))

    def forward(self, x):
        return self.net(x)


class KDLoss(nn.Module):
    def __init__(self, T=4.0, alpha=0.9):
        super().__init__()
        self.T, self.alpha = T, alpha

    def forward(self, student_logits, teacher_logits, labels):
        soft = F.kl_div(
            F.log_softmax(student_logits / self.T, dim=-1),
            F.softmax(teacher_logits / self.T, dim=-1),
            reduction="batchmean",
        ) * (self.T ** 2)
        hard = F.cross_entropy(student_logits, labels)
        return self.alpha * soft + (1.0 - self.alpha) * hard


def synthetic_batch(teacher, bs, in_dim, device):
    x = torch.randn(bs, in_dim, device=device)
    with torch.no_grad():
        t_logits = teacher(x)
    return x, t_logits, t_logits.argmax(-1)


def run(args):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    teacher = Teacher().to(device).eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    student = Student(dropout=args.dropout).to(device)
    crit = KDLoss(T=args.temperature, alpha=args.alpha)
    opt = torch.optim.AdamW(student.parameters(), lr=args.lr, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps)

    for step in range(1, args.steps + 1):
        x, t_logits, y = synthetic_batch(teacher, args.batch_size, 256, device)
        student(x)
        loss = crit(student.last_logits, t_logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % args.log_every == 0:
            agree = (student.last_logits.argmax(-1) == y).float().mean().item()
            log.info("step %5d  kd %.4f  top1-agree %.3f", step, loss.item(), agree)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--temperature", type=float, default=4.0)
    parser.add_argument("--alpha", type=float, default=0.9)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--log-every", type=int, default=200)
    logging.basicConfig(level=logging.INFO)
    run(parser.parse_args())
