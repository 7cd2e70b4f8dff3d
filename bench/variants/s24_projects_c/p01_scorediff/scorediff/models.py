"""A compact noise-conditional score network for 32x32 images."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class GaussianFourierProjection(nn.Module):
    """Random Fourier features for the continuous time variable."""

    def __init__(self, embed_dim: int, scale: float = 16.0):
        super().__init__()
        self.register_buffer("W", torch.randn(embed_dim // 2) * scale)

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        proj = t[:, None] * self.W[None, :] * 2 * math.pi
        return torch.cat([torch.sin(proj), torch.cos(proj)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, temb_dim: int, dropout: float = 0.1):
        super().__init__()
        self.norm1 = nn.GroupNorm(min(32, in_ch // 4), in_ch)
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.temb = nn.Linear(temb_dim, out_ch)
        self.norm2 = nn.GroupNorm(min(32, out_ch // 4), out_ch)
        self.drop = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)
        self.skip = nn.Conv2d(in_ch, out_ch, 1) if in_ch != out_ch else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(temb))[:, :, None, None]
        h = self.conv2(self.drop(F.silu(self.norm2(h))))
        return h + self.skip(x)


class ScoreUNet(nn.Module):
    """Two-level UNet; output is divided by the marginal std as in NCSN++."""

    def __init__(self, channels: int = 3, base: int = 64, temb_dim: int = 256, marginal_std=None):
        super().__init__()
        self.marginal_std = marginal_std
        self.embed = nn.Sequential(
            GaussianFourierProjection(temb_dim),
            nn.Linear(temb_dim, temb_dim),
            nn.SiLU(),
            nn.Linear(temb_dim, temb_dim),
        )
        self.stem = nn.Conv2d(channels, base, 3, padding=1)
        self.down1 = ResBlock(base, base, temb_dim)
        self.down2 = ResBlock(base, base * 2, temb_dim)
        self.mid = ResBlock(base * 2, base * 2, temb_dim)
        self.up2 = ResBlock(base * 4, base, temb_dim)
        self.up1 = ResBlock(base * 2, base, temb_dim)
        self.head = nn.Sequential(nn.GroupNorm(16, base), nn.SiLU(), nn.Conv2d(base, channels, 3, padding=1))

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        temb = self.embed(t)
        h0 = self.stem(x)
        h1 = self.down1(h0, temb)
        h2 = self.down2(F.avg_pool2d(h1, 2), temb)
        m = self.mid(h2, temb)
        u2 = self.up2(torch.cat([m, h2], dim=1), temb)
        u1 = self.up1(torch.cat([F.interpolate(u2, scale_factor=2.0), h1], dim=1), temb)
        out = self.head(u1)
        if self.marginal_std is not None:
            out = out / self.marginal_std(t)[:, None, None, None]
        return out


def build_model(cfg, sde) -> ScoreUNet:
    def marginal_std(t):
        _, std = sde.marginal_prob(torch.zeros(t.shape[0], 1, 1, 1, device=t.device), t)
        return std

    return ScoreUNet(channels=cfg.channels, base=cfg.base_channels, marginal_std=marginal_std)
