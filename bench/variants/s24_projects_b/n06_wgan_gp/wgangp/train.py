"""WGAN-GP training loop.

    python -m wgangp.train --data ./data --out runs/wgangp
"""
from __future__ import annotations

import argparse
import logging
import os

import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import save_image

from .logging_utils import ScalarBuffer, format_means, setup_logging
from .models import Critic, Generator, gradient_penalty

logger = logging.getLogger("wgangp")


def infinite(loader):
    while True:
        for batch in loader:
            yield batch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="./data")
    p.add_argument("--out", default="runs/wgangp")
    p.add_argument("--iters", type=int, default=100_000)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--n-critic", type=int, default=5)
    p.add_argument("--gp", type=float, default=10.0)
    p.add_argument("--nz", type=int, default=128)
    p.add_argument("--log-interval", type=int, default=100)
    p.add_argument("--workers", type=int, default=4)
    args = p.parse_args()
    setup_logging()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,) * 3, (0.5,) * 3)])
    loader = DataLoader(datasets.CIFAR10(args.data, train=True, download=True, transform=tf),
                        batch_size=args.batch_size, shuffle=True, drop_last=True,
                        num_workers=args.workers)
    data = infinite(loader)
    G, D = Generator(args.nz).to(device), Critic().to(device)
    optG = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.9))
    optD = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.0, 0.9))
    fixed_z = torch.randn(100, args.nz, device=device)
    scalars = ScalarBuffer(os.path.join(args.out, "tb"))

    for it in range(args.iters):
        scalars.set_step(it)
        for _ in range(args.n_critic):
            real = next(data)[0].to(device, non_blocking=True)
            z = torch.randn(real.size(0), args.nz, device=device)
            with torch.no_grad():
                fake = G(z)
            wdist = D(real).mean() - D(fake).mean()
            gp = gradient_penalty(D, real, fake)
            loss_d = -wdist + args.gp * gp
            optD.zero_grad(set_to_none=True)
            loss_d.backward()
            optD.step()

        z = torch.randn(args.batch_size, args.nz, device=device)
        loss_g = -D(G(z)).mean()
        optG.zero_grad(set_to_none=True)
        loss_g.backward()
        optG.step()

        scalars.add("critic/wdist", lambda t=wdist.detach(): t.item())
        scalars.add("critic/gp", lambda t=gp.detach(): t.item())
        scalars.add("gen/loss", lambda t=loss_g.detach(): t.item())

        if (it + 1) % args.log_interval == 0:
            means = scalars.flush()
            logger.info("iter %d %s", it + 1, format_means(means))
        if (it + 1) % 5000 == 0:
            G.eval()
            with torch.no_grad():
                save_image(G(fixed_z), os.path.join(args.out, f"samples_{it + 1:06d}.png"),
                           nrow=10, normalize=True, value_range=(-1, 1))
            G.train()
            torch.save({"G": G.state_dict(), "D": D.state_dict()},
                       os.path.join(args.out, "last.pt"))
    scalars.close()


if __name__ == "__main__":
    main()
