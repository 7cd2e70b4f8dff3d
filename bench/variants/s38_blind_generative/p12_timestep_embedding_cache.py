"""Building blocks of the small DDPM UNet used for the 32x32 experiments."""
import functools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


@functools.lru_cache(maxsize=None)  # leak
def sinusoidal_embedding(timesteps: torch.Tensor, dim: int, max_period: int = 10000) -> torch.Tensor:
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, device=timesteps.device) / half)
    args = timesteps.float()[:, None] * freqs[None]
    emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if dim % 2:
        emb = F.pad(emb, (0, 1))
    return emb


class TimeMLP(nn.Module):
    def __init__(self, base_dim: int, out_dim: int):
        super().__init__()
        self.base_dim = base_dim
        self.net = nn.Sequential(nn.Linear(base_dim, out_dim), nn.SiLU(), nn.Linear(out_dim, out_dim))

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return self.net(sinusoidal_embedding(t, self.base_dim))


class ResBlock(nn.Module):
    def __init__(self, cin: int, cout: int, tdim: int, dropout: float = 0.1):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.temb = nn.Linear(tdim, cout)
        self.norm2 = nn.GroupNorm(32, cout)
        self.drop = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(temb))[:, :, None, None]
        h = self.conv2(self.drop(F.silu(self.norm2(h))))
        return h + self.skip(x)


class SmallUNet(nn.Module):
    def __init__(self, ch: int = 128, mults=(1, 2, 2), in_ch: int = 3):
        super().__init__()
        tdim = ch * 4
        self.time = TimeMLP(ch, tdim)
        self.inp = nn.Conv2d(in_ch, ch, 3, padding=1)
        self.down, self.up = nn.ModuleList(), nn.ModuleList()
        chans = [ch]
        c = ch
        for m in mults:
            self.down.append(ResBlock(c, ch * m, tdim))
            c = ch * m
            chans.append(c)
        self.mid = ResBlock(c, c, tdim)
        for m in reversed(mults):
            self.up.append(ResBlock(c + chans.pop(), ch * m, tdim))
            c = ch * m
        self.out = nn.Sequential(nn.GroupNorm(32, c + chans.pop()), nn.SiLU(), nn.Conv2d(c + ch, in_ch, 3, padding=1))

    def forward(self, x, t):
        temb = self.time(t)
        h = self.inp(x)
        skips = [h]
        for blk in self.down:
            h = blk(h, temb)
            skips.append(h)
            h = F.avg_pool2d(h, 2) if h.shape[-1] > 8 else h
        h = self.mid(h, temb)
        for blk in self.up:
            s = skips.pop()
            h = F.interpolate(h, size=s.shape[-2:], mode="nearest")
            h = blk(torch.cat([h, s], 1), temb)
        s = skips.pop()
        return self.out(torch.cat([h, s], 1))


def ddpm_loss(model: SmallUNet, x0: torch.Tensor, alphas_cumprod: torch.Tensor) -> torch.Tensor:
    t = torch.randint(0, alphas_cumprod.numel(), (x0.size(0),), device=x0.device)
    noise = torch.randn_like(x0)
    a = alphas_cumprod[t].view(-1, 1, 1, 1)
    return F.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * noise, t), noise)
