"""DCGAN-ish trainer on synthetic data.

Trainer subclasses can schedule work to run after the optimizer step via
``self.after_step(fn)``; the base loop calls every scheduled function once,
with the current global step, and then drops it.
"""
import argparse
import logging
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger(__name__)


class AdversarialTrainerBase:
    def __init__(self, cfg):
        self.cfg = cfg
        self.global_step = 0
        self._post_step = []
        self.scalars = {}

    def after_step(self, fn):
        self._post_step.append(fn)

    def train_step(self, real):
        raise NotImplementedError

    def sample_real(self):
        raise NotImplementedError

    def fit(self):
        for it in range(self.cfg.iters):
            real = self.sample_real()
            self.train_step(real)
            pending, self._post_step = self._post_step, []
            for fn in pending:
                fn(self.global_step)
            self.global_step += 1
            if it % self.cfg.log_every == 0:
                log.info("it %d %s", it, {k: round(v, 4) for k, v in self.scalars.items()})


class Generator(nn.Module):
    def __init__(self, z_dim=64, ch=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(z_dim, ch * 4, 4, 1, 0), nn.BatchNorm2d(ch * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ch * 4, ch * 2, 4, 2, 1), nn.BatchNorm2d(ch * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ch * 2, 3, 4, 2, 1), nn.Tanh())

    def forward(self, z):
        return self.net(z[:, :, None, None])


class Discriminator(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, ch, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ch, ch * 2, 4, 2, 1), nn.BatchNorm2d(ch * 2), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ch * 2, 1, 4, 1, 0))

    def forward(self, x):
        return self.net(x).view(-1)


class DCGANTrainer(AdversarialTrainerBase):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.G, self.D = Generator(cfg.z_dim), Discriminator()
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=cfg.lr, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=cfg.lr, betas=(0.5, 0.999))

    def sample_real(self):
        return torch.tanh(torch.randn(self.cfg.batch_size, 3, 16, 16))

    def _publish(self, step, d_loss, g_loss):
        if step % self.cfg.log_every == 0:
            self.scalars = {"d_loss": d_loss.item(), "g_loss": g_loss.item()}

    def train_step(self, real):
        z = torch.randn(real.size(0), self.cfg.z_dim)
        fake = self.G(z)
        d_loss = F.softplus(-self.D(real)).mean() + F.softplus(self.D(fake.detach())).mean()
        self.opt_d.zero_grad()
        d_loss.backward()
        self.opt_d.step()

        g_loss = F.softplus(-self.D(fake)).mean()
        self.opt_g.zero_grad()
        g_loss.backward()
        self.opt_g.step()
        self.after_step(lambda step: self._publish(step, d_loss.detach(), g_loss.detach()))

    def save(self, path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        torch.save({"G": self.G.state_dict(), "D": self.D.state_dict()}, path)


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=20000)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--z-dim", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--out", default="checkpoints/dcgan.pt")
    return p.parse_args()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    cfg = get_args()
    trainer = DCGANTrainer(cfg)
    trainer.fit()
    trainer.save(cfg.out)
