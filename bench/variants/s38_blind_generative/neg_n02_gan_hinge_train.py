"""Hinge-loss GAN trainer with R1 regularisation and per-interval loss logging."""
import argparse
import collections
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import save_image

from nets import ResNetDiscriminator, ResNetGenerator


def r1_penalty(d_out_real: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    grad, = torch.autograd.grad(d_out_real.sum(), real, create_graph=True)
    return grad.pow(2).flatten(1).sum(1).mean()


class Trainer:
    def __init__(self, args):
        self.args = args
        self.device = torch.device("cuda")
        self.G = ResNetGenerator(args.z_dim).to(self.device)
        self.D = ResNetDiscriminator().to(self.device)
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=args.lr, betas=(0.0, 0.99))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=args.lr, betas=(0.0, 0.99))
        self.meters = collections.defaultdict(float)
        self.counts = collections.defaultdict(int)
        self.step = 0

    def _log(self, name: str, value: torch.Tensor):
        self.meters[name] += value.item()
        self.counts[name] += 1

    def d_step(self, real: torch.Tensor):
        z = torch.randn(real.size(0), self.args.z_dim, device=self.device)
        with torch.no_grad():
            fake = self.G(z)
        real.requires_grad_(self.step % self.args.r1_every == 0)
        out_real = self.D(real)
        out_fake = self.D(fake)
        loss = F.relu(1 - out_real).mean() + F.relu(1 + out_fake).mean()
        if real.requires_grad:
            r1 = r1_penalty(out_real, real)
            loss = loss + 0.5 * self.args.r1_gamma * self.args.r1_every * r1
            self._log("r1", r1.detach())
        self.opt_d.zero_grad(set_to_none=True)
        loss.backward()
        self.opt_d.step()
        self._log("d_loss", loss.detach())

    def g_step(self, batch_size: int):
        z = torch.randn(batch_size, self.args.z_dim, device=self.device)
        loss = -self.D(self.G(z)).mean()
        self.opt_g.zero_grad(set_to_none=True)
        loss.backward()
        self.opt_g.step()
        self._log("g_loss", loss.detach())

    def flush_logs(self):
        parts = [f"{k} {self.meters[k] / self.counts[k]:.4f}" for k in sorted(self.meters)]
        print(f"[{self.step}] " + " ".join(parts))
        self.meters.clear()
        self.counts.clear()

    def fit(self, loader: DataLoader):
        fixed_z = torch.randn(64, self.args.z_dim, device=self.device)
        while self.step < self.args.steps:
            for real, _ in loader:
                real = real.to(self.device, non_blocking=True)
                self.d_step(real)
                self.g_step(real.size(0))
                self.step += 1
                if self.step % self.args.log_every == 0:
                    self.flush_logs()
                if self.step % self.args.sample_every == 0:
                    self.G.eval()
                    with torch.no_grad():
                        imgs = self.G(fixed_z).mul(0.5).add(0.5).clamp(0, 1).cpu()
                    save_image(imgs, os.path.join(self.args.out, f"{self.step:07d}.png"), nrow=8)
                    self.G.train()
                if self.step >= self.args.steps:
                    return


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", default="out")
    ap.add_argument("--z_dim", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--r1_gamma", type=float, default=10.0)
    ap.add_argument("--r1_every", type=int, default=16)
    ap.add_argument("--steps", type=int, default=200000)
    ap.add_argument("--log_every", type=int, default=200)
    ap.add_argument("--sample_every", type=int, default=5000)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tf = transforms.Compose([transforms.Resize(128), transforms.CenterCrop(128),
                             transforms.RandomHorizontalFlip(), transforms.ToTensor(),
                             transforms.Normalize((0.5,) * 3, (0.5,) * 3)])
    dl = DataLoader(datasets.ImageFolder(args.data, tf), batch_size=32, shuffle=True,
                    num_workers=8, pin_memory=True, drop_last=True)
    Trainer(args).fit(dl)
