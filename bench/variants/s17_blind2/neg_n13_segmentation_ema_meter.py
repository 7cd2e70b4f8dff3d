"""Semantic segmentation training with CE + Dice and smoothed loss meters."""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


def dice_loss(logits, target, num_classes, ignore_index=255, eps=1.0):
    valid = (target != ignore_index).unsqueeze(1)
    target = target.clone()
    target[target == ignore_index] = 0
    onehot = F.one_hot(target, num_classes).permute(0, 3, 1, 2).float()
    probs = logits.softmax(1) * valid
    onehot = onehot * valid
    inter = (probs * onehot).sum((0, 2, 3))
    union = probs.sum((0, 2, 3)) + onehot.sum((0, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


class SegCriterion(nn.Module):
    def __init__(self, num_classes, aux_weight=0.4, dice_weight=0.5):
        super().__init__()
        self.num_classes = num_classes
        self.aux_weight = aux_weight
        self.dice_weight = dice_weight

    def forward(self, outputs, target):
        out = F.interpolate(outputs["out"], size=target.shape[-2:], mode="bilinear", align_corners=False)
        aux = F.interpolate(outputs["aux"], size=target.shape[-2:], mode="bilinear", align_corners=False)
        return {
            "ce": F.cross_entropy(out, target, ignore_index=255),
            "aux_ce": self.aux_weight * F.cross_entropy(aux, target, ignore_index=255),
            "dice": self.dice_weight * dice_loss(out, target, self.num_classes),
        }


class EMAMeter:
    """Exponentially smoothed scalar with bias correction (as in fastai's SmoothenValue)."""

    def __init__(self, beta=0.98):
        self.beta = beta
        self.value = 0.0
        self.steps = 0

    def update(self, x):
        x = float(x)
        self.steps += 1
        self.value = self.beta * self.value + (1 - self.beta) * x

    @property
    def smooth(self):
        return self.value / (1 - self.beta ** self.steps)


def train(model, loader, num_classes, epochs=80, lr=0.01, device="cuda", print_freq=20):
    model = model.to(device)
    criterion = SegCriterion(num_classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    total_iters = epochs * len(loader)
    scheduler = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=total_iters, power=0.9)
    meters = defaultdict(EMAMeter)
    it = 0
    for epoch in range(epochs):
        model.train()
        for images, masks in loader:
            images, masks = images.to(device), masks.to(device).long()
            loss_dict = criterion(model(images), masks)
            loss = sum(loss_dict.values())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            for name, value in loss_dict.items():
                meters[name].update(value)
            it += 1
            if it % print_freq == 0:
                msg = "  ".join(f"{k}={m.smooth:.4f}" for k, m in meters.items())
                print(f"epoch {epoch} it {it}/{total_iters} lr {scheduler.get_last_lr()[0]:.5f} {msg}")
