# Minimal DDPM training script with x0-preview grids.
# Adapted from an internal notebook; kept single-file on purpose.
from dataclasses import dataclass, field
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision.datasets import MNIST
from torchvision.transforms import ToTensor
from torchvision.utils import save_image


@dataclass
class Cfg:
    T: int = 1000
    lr: float = 2e-4
    batch_size: int = 128
    epochs: int = 30
    preview_n: int = 16
    out_dir: str = "ddpm_out"
    device: str = field(default_factory=lambda: "cuda" if torch.cuda.is_available() else "cpu")


def linear_beta_schedule(T, beta_start=1e-4, beta_end=0.02):
    return torch.linspace(beta_start, beta_end, T)


class TinyUNet(nn.Module):
    def __init__(self, ch=64, tdim=128):
        super().__init__()
        self.tdim = tdim
        self.temb = nn.Sequential(nn.Linear(tdim, ch), nn.SiLU(), nn.Linear(ch, ch))
        self.down = nn.Conv2d(1, ch, 3, padding=1)
        self.mid = nn.Conv2d(ch, ch, 3, padding=1)
        self.up = nn.Conv2d(ch, 1, 3, padding=1)

    def sinusoidal(self, t):
        half = self.tdim // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device) / half)
        args = t[:, None].float() * freqs[None]
        return torch.cat([args.sin(), args.cos()], dim=-1)

    def forward(self, x, t):
        h = F.silu(self.down(x))
        h = h + self.temb(self.sinusoidal(t))[:, :, None, None]
        h = F.silu(self.mid(h))
        return self.up(h)


class PreviewGrid:
    """Collects predicted-x0 previews and dumps them as one big grid at the end."""

    def __init__(self, out_dir, n):
        self.out_dir = out_dir
        self.n = n
        self._frames = []

    def push(self, x0_hat):
        self._frames.append(x0_hat[: self.n].detach().clamp(-1, 1).cpu())
        if len(self._frames) > 64:
            del self._frames[0]

    def dump(self, tag):
        if not self._frames:
            return
        grid = torch.cat(self._frames, dim=0)
        save_image((grid + 1) / 2, os.path.join(self.out_dir, f"{tag}.png"), nrow=self.n)


class Diffusion:
    def __init__(self, cfg):
        self.T = cfg.T
        betas = linear_beta_schedule(cfg.T).to(cfg.device)
        alphas = 1.0 - betas
        self.abar = torch.cumprod(alphas, 0)

    def q_sample(self, x0, t, noise):
        a = self.abar[t].sqrt()[:, None, None, None]
        s = (1 - self.abar[t]).sqrt()[:, None, None, None]
        return a * x0 + s * noise

    def predict_x0(self, xt, t, eps):
        a = self.abar[t][:, None, None, None]
        return (xt - (1 - a).sqrt() * eps) / a.sqrt()


def training_step(net, diff, x0, cfg):
    t = torch.randint(0, diff.T, (x0.size(0),), device=x0.device)
    noise = torch.randn_like(x0)
    xt = diff.q_sample(x0, t, noise)
    eps = net(xt, t)
    loss = F.mse_loss(eps, noise)
    return loss, {"x0_hat": diff.predict_x0(xt, t, eps)}


cfg = Cfg()
os.makedirs(cfg.out_dir, exist_ok=True)
ds = MNIST("./data", train=True, download=True, transform=ToTensor())
dl = DataLoader(ds, batch_size=cfg.batch_size, shuffle=True, num_workers=2, drop_last=True)

net = TinyUNet().to(cfg.device)
diff = Diffusion(cfg)
opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr)
viz = PreviewGrid(cfg.out_dir, cfg.preview_n)

t0 = time.time()
for ep in range(cfg.epochs):
    for it, (x, _) in enumerate(dl):
        x = x.to(cfg.device) * 2 - 1
        loss, extras = training_step(net, diff, x, cfg)
        opt.zero_grad()
        loss.backward()
        opt.step()
        viz.push(extras["x0_hat"])
        if it % 100 == 0:
            print(f"ep {ep} it {it} loss {loss.item():.4f} ({time.time() - t0:.0f}s)")

viz.dump("x0_previews_final")
torch.save(net.state_dict(), os.path.join(cfg.out_dir, "unet.pt"))
