import functools
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

activations = OrderedDict()


def hook_fn(name, module, inputs, output):
    if name not in activations:
        activations[name] = []
    activations[name].append(output)  # leak


class UNetDown(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(c_in, c_out, 3, padding=1), nn.GroupNorm(8, c_out), nn.SiLU(),
            nn.Conv2d(c_out, c_out, 3, padding=1), nn.GroupNorm(8, c_out), nn.SiLU(),
        )

    def forward(self, x):
        return self.block(x)


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down1 = UNetDown(1, 32)
        self.down2 = UNetDown(32, 64)
        self.up = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.out = nn.Conv2d(64, 1, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(F.max_pool2d(d1, 2))
        u = self.up(d2)
        return self.out(torch.cat([u, d1], dim=1))


def register_all(model):
    for name, module in model.named_children():
        if isinstance(module, UNetDown):
            module.register_forward_hook(functools.partial(hook_fn, name))


def train_denoiser(model, loader, epochs=10, sigma=0.1):
    register_all(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for clean in loader:
            noisy = clean + sigma * torch.randn_like(clean)
            loss = F.mse_loss(model(noisy), clean)
            opt.zero_grad()
            loss.backward()
            opt.step()
