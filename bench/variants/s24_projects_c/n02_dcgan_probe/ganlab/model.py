"""DCGAN generator/discriminator with spectral norm on D."""
import torch
import torch.nn as nn
from torch.nn.utils import spectral_norm

from .hooks import ActivationProbe


class Generator(nn.Module):
    def __init__(self, z_dim: int = 128, ngf: int = 64, channels: int = 3):
        super().__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(
            nn.ConvTranspose2d(z_dim, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, channels, 4, 2, 1, bias=False), nn.Tanh(),
        )
        self.probe = None

    def enable_probe(self) -> ActivationProbe:
        if self.probe is None:
            self.probe = ActivationProbe().attach(self, prefix="G.")
        return self.probe

    def disable_probe(self) -> None:
        if self.probe is not None:
            self.probe.remove()
            self.probe = None

    def sample_z(self, n: int, device) -> torch.Tensor:
        return torch.randn(n, self.z_dim, 1, 1, device=device)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, ndf: int = 64, channels: int = 3):
        super().__init__()
        self.net = nn.Sequential(
            spectral_norm(nn.Conv2d(channels, ndf, 4, 2, 1)), nn.LeakyReLU(0.2, True),
            spectral_norm(nn.Conv2d(ndf, ndf * 2, 4, 2, 1)), nn.LeakyReLU(0.2, True),
            spectral_norm(nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1)), nn.LeakyReLU(0.2, True),
            spectral_norm(nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1)), nn.LeakyReLU(0.2, True),
            spectral_norm(nn.Conv2d(ndf * 8, 1, 4, 1, 0)),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).view(-1)


def weights_init(m: nn.Module) -> None:
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)) and not hasattr(m, "weight_orig"):
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)
