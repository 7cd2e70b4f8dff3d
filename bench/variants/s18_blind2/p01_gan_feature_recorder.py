"""Feature-matching GAN trainer (StyleGAN-lite ablation).

Trains a small conv generator / discriminator pair on CIFAR-like data with an
additional feature-matching term.  Per-layer discriminator statistics are kept
by a `FeatureStatsRecorder` so we can plot how the real/fake feature gap evolves.
"""
import argparse
import logging
import os
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

log = logging.getLogger("fmgan")


class FeatureStatsRecorder:
    """Keeps a running history of per-layer discriminator activations."""

    def __init__(self, layers):
        self.layers = list(layers)
        self._history = defaultdict(list)

    def observe(self, name, feat):
        # mean over batch -> per-channel signature for this step
        self._history[name].append(feat.mean(0))  # leak

    def summary(self):
        out = {}
        for name, hist in self._history.items():
            if hist:
                out[name] = float(hist[-1].abs().mean())
        return out


class Generator(nn.Module):
    def __init__(self, nz=128, ngf=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z.view(z.size(0), -1, 1, 1))


class Discriminator(nn.Module):
    def __init__(self, ndf=64):
        super().__init__()
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True)),
            nn.Sequential(nn.Conv2d(ndf, ndf * 2, 4, 2, 1), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, True)),
            nn.Sequential(nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1), nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2, True)),
        ])
        self.head = nn.Conv2d(ndf * 4, 1, 4, 1, 0)

    def forward(self, x, return_feats=False):
        feats = []
        for blk in self.blocks:
            x = blk(x)
            feats.append(x)
        logits = self.head(x).view(-1)
        return (logits, feats) if return_feats else logits


def feature_matching_loss(real_feats, fake_feats, recorder=None):
    total = 0.0
    for i, (fr, ff) in enumerate(zip(real_feats, fake_feats)):
        if recorder is not None:
            recorder.observe(f"d{i}", ff)
        total = total + F.mse_loss(ff.mean(0), fr.detach().mean(0))
    return total


def d_step(G, D, opt_d, real, nz):
    z = torch.randn(real.size(0), nz, device=real.device)
    with torch.no_grad():
        fake = G(z)
    loss = F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()
    opt_d.zero_grad(set_to_none=True)
    loss.backward()
    opt_d.step()
    return loss.item()


def g_step(G, D, opt_g, real, nz, fm_weight, recorder):
    z = torch.randn(real.size(0), nz, device=real.device)
    fake = G(z)
    fake_logits, fake_feats = D(fake, return_feats=True)
    with torch.no_grad():
        _, real_feats = D(real, return_feats=True)
    adv = F.softplus(-fake_logits).mean()
    fm = feature_matching_loss(real_feats, fake_feats, recorder=recorder)
    loss = adv + fm_weight * fm
    opt_g.zero_grad(set_to_none=True)
    loss.backward()
    opt_g.step()
    return adv.item(), float(fm)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="./data")
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--bs", type=int, default=128)
    p.add_argument("--nz", type=int, default=128)
    p.add_argument("--fm-weight", type=float, default=1.0)
    p.add_argument("--out", default="runs/fmgan")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)
    os.makedirs(args.out, exist_ok=True)

    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tf = transforms.Compose([transforms.Resize(32), transforms.ToTensor(), transforms.Normalize([0.5] * 3, [0.5] * 3)])
    loader = DataLoader(datasets.CIFAR10(args.data, download=True, transform=tf),
                        batch_size=args.bs, shuffle=True, num_workers=4, drop_last=True)

    G, D = Generator(args.nz).to(dev), Discriminator().to(dev)
    opt_g = torch.optim.Adam(G.parameters(), 2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), 2e-4, betas=(0.5, 0.999))
    recorder = FeatureStatsRecorder(["d0", "d1", "d2"])

    step = 0
    for epoch in range(args.epochs):
        for real, _ in loader:
            real = real.to(dev, non_blocking=True)
            d_loss = d_step(G, D, opt_d, real, args.nz)
            g_adv, g_fm = g_step(G, D, opt_g, real, args.nz, args.fm_weight, recorder)
            if step % 200 == 0:
                log.info("ep %d it %d d=%.3f g=%.3f fm=%.3f %s", epoch, step, d_loss, g_adv, g_fm, recorder.summary())
            step += 1
        torch.save({"G": G.state_dict(), "D": D.state_dict()}, os.path.join(args.out, f"ckpt_{epoch:03d}.pt"))


if __name__ == "__main__":
    main()
