"""ResNet-free DCGAN-style generator and critic for 32x32 images."""
from __future__ import annotations

import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, nz: int = 128, dim: int = 128):
        super().__init__()
        self.dim = dim
        self.fc = nn.Sequential(nn.Linear(nz, 4 * 4 * 4 * dim), nn.BatchNorm1d(4 * 4 * 4 * dim),
                                nn.ReLU(True))
        self.net = nn.Sequential(
            nn.ConvTranspose2d(4 * dim, 2 * dim, 4, 2, 1), nn.BatchNorm2d(2 * dim), nn.ReLU(True),
            nn.ConvTranspose2d(2 * dim, dim, 4, 2, 1), nn.BatchNorm2d(dim), nn.ReLU(True),
            nn.ConvTranspose2d(dim, 3, 4, 2, 1), nn.Tanh(),
        )

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(self.fc(z).view(-1, 4 * self.dim, 4, 4))


class Critic(nn.Module):
    """No batch norm in the critic: the gradient penalty is per-sample."""

    def __init__(self, dim: int = 128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, dim, 3, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(dim, 2 * dim, 3, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(2 * dim, 4 * dim, 3, 2, 1), nn.LeakyReLU(0.2, True),
        )
        self.fc = nn.Linear(4 * 4 * 4 * dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.net(x).flatten(1)).view(-1)


def gradient_penalty(critic: nn.Module, real: torch.Tensor, fake: torch.Tensor) -> torch.Tensor:
    alpha = torch.rand(real.size(0), 1, 1, 1, device=real.device)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = critic(interp)
    grads, = torch.autograd.grad(out.sum(), interp, create_graph=True)
    return ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
