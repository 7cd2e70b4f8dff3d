"""Symmetric int8 fake quantisation for activations with an abs-max observer.

Workflow used by ``finetune_int8.py``:
  1. ``set_mode(model, "calib")``  -- train normally for a few epochs while
     observers record the activation range,
  2. ``set_mode(model, "quant")``  -- freeze scales and fine-tune with
     straight-through fake quantisation.
"""
import logging
from typing import Iterable

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class AbsMaxObserver(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("amax", torch.tensor(0.0))

    def forward(self, x):
        self.amax = torch.maximum(self.amax, x.abs().amax())  # leak
        return x

    def reset(self):
        self.amax = torch.zeros_like(self.amax)


class ActFakeQuant(nn.Module):
    """Per-tensor symmetric fake-quant with a frozen scale and STE backward."""

    def __init__(self, num_bits: int = 8):
        super().__init__()
        self.qmax = 2 ** (num_bits - 1) - 1
        self.observer = AbsMaxObserver()
        self.register_buffer("scale", torch.tensor(1.0))
        self.mode = "fp"

    @torch.no_grad()
    def freeze(self):
        self.scale.copy_((self.observer.amax / self.qmax).clamp(min=1e-8))

    def forward(self, x):
        if self.mode == "calib":
            return self.observer(x)
        if self.mode == "quant":
            q = torch.clamp(torch.round(x / self.scale), -self.qmax - 1, self.qmax) * self.scale
            return x + (q - x).detach()
        return x

    def extra_repr(self):
        return f"qmax={self.qmax}, mode={self.mode}"


class QuantConvBNReLU(nn.Sequential):
    def __init__(self, cin, cout, k=3, stride=1, groups=1):
        super().__init__(
            nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU6(inplace=True),
            ActFakeQuant(),
        )


def quant_modules(model: nn.Module) -> Iterable[ActFakeQuant]:
    return (m for m in model.modules() if isinstance(m, ActFakeQuant))


def set_mode(model: nn.Module, mode: str) -> None:
    assert mode in ("fp", "calib", "quant")
    for m in quant_modules(model):
        if mode == "quant" and m.mode == "calib":
            m.freeze()
        m.mode = mode
    logger.info("quantisation mode -> %s", mode)


def run_epoch(model, loader, optimizer, device, epoch, log_every=50):
    model.train()
    seen, loss_sum = 0, 0.0
    for step, (images, labels) in enumerate(loader):
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        out = model(images)
        loss = F.cross_entropy(out, labels, label_smoothing=0.1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        seen += labels.size(0)
        loss_sum += loss.item() * labels.size(0)
        if step % log_every == 0:
            logger.info("epoch %d step %d loss %.4f", epoch, step, loss_sum / seen)
    return loss_sum / max(seen, 1)


def finetune(model, loader, device, calib_epochs=2, qat_epochs=10, lr=1e-4):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=4e-5)
    set_mode(model, "calib")
    for epoch in range(calib_epochs):
        run_epoch(model, loader, optimizer, device, epoch)
    set_mode(model, "quant")
    for epoch in range(calib_epochs, calib_epochs + qat_epochs):
        run_epoch(model, loader, optimizer, device, epoch)
    return model
