"""Minimal DCGAN with a small hook-based training engine."""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import save_image


class History:
    def __init__(self):
        self.records = {}

    def update(self, **scalars):
        for name, value in scalars.items():
            self.records.setdefault(name, []).append(value)  # leak

    def latest(self, name):
        return self.records[name][-1]


class Hook:
    def before_train(self, engine): pass
    def after_iter(self, engine): pass
    def after_epoch(self, engine): pass


class HistoryHook(Hook):
    def after_iter(self, engine):
        engine.history.update(**engine.outputs)


class SampleHook(Hook):
    def __init__(self, out_dir, z):
        self.out_dir, self.z = out_dir, z

    def after_epoch(self, engine):
        with torch.no_grad():
            imgs = engine.G(self.z.to(engine.device))
        save_image(imgs * 0.5 + 0.5, os.path.join(self.out_dir, f"ep{engine.epoch:03d}.png"), nrow=8)
        print(f"[{engine.epoch}] D={float(engine.history.latest('d_loss')):.3f} "
              f"G={float(engine.history.latest('g_loss')):.3f}")


class GANEngine:
    def __init__(self, G, D, opt_g, opt_d, device, nz=100, hooks=()):
        self.G, self.D, self.opt_g, self.opt_d = G, D, opt_g, opt_d
        self.device, self.nz = device, nz
        self.hooks = list(hooks)
        self.history = History()
        self.outputs = {}
        self.epoch = 0

    def _call(self, name):
        for h in self.hooks:
            getattr(h, name)(self)

    def step(self, real):
        real = real.to(self.device)
        b = real.size(0)
        z = torch.randn(b, self.nz, 1, 1, device=self.device)
        fake = self.G(z)

        self.opt_d.zero_grad()
        d_real = self.D(real).view(-1)
        d_fake = self.D(fake.detach()).view(-1)
        d_loss = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()
        d_loss.backward()
        self.opt_d.step()

        self.opt_g.zero_grad()
        g_loss = F.softplus(-self.D(fake).view(-1)).mean()
        g_loss.backward()
        self.opt_g.step()
        return {"d_loss": d_loss, "g_loss": g_loss, "d_real": d_real.mean()}

    def run(self, loader, epochs):
        self._call("before_train")
        for self.epoch in range(epochs):
            for real, _ in loader:
                self.outputs = self.step(real)
                self._call("after_iter")
            self._call("after_epoch")


def build(nz=100, ngf=64, ndf=64):
    G = nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
        nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False), nn.Tanh())
    D = nn.Sequential(
        nn.Conv2d(1, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf * 2, 1, 4, 1, 0))
    return G, D


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="./data")
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--out", default="samples")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    tf = transforms.Compose([transforms.Resize(32), transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
    loader = DataLoader(datasets.MNIST(a.data, download=True, transform=tf), batch_size=128, shuffle=True)
    G, D = build()
    G, D = G.to(dev), D.to(dev)
    opt_g = torch.optim.Adam(G.parameters(), 2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), 2e-4, betas=(0.5, 0.999))
    engine = GANEngine(G, D, opt_g, opt_d, dev,
                       hooks=[HistoryHook(), SampleHook(a.out, torch.randn(64, 100, 1, 1))])
    engine.run(loader, a.epochs)
