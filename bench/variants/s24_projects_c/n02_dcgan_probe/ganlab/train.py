"""Hinge-loss DCGAN on CelebA 64x64.

    python -m ganlab.train --data /datasets/celeba --iters 100000
"""
import argparse
import itertools
import logging
import os

import torch
import torch.nn.functional as F
import torchvision.utils as vutils
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from ganlab import model as M

logger = logging.getLogger("ganlab")


def infinite(loader):
    for epoch in itertools.count():
        for batch in loader:
            yield batch


def d_hinge(real_logits, fake_logits):
    return F.relu(1.0 - real_logits).mean() + F.relu(1.0 + fake_logits).mean()


def g_hinge(fake_logits):
    return -fake_logits.mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--iters", type=int, default=100_000)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--n-dis", type=int, default=2)
    ap.add_argument("--probe-every", type=int, default=1000)
    ap.add_argument("--out", default="runs/dcgan")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda")

    tf = transforms.Compose([transforms.Resize(64), transforms.CenterCrop(64), transforms.ToTensor(),
                             transforms.Normalize([0.5] * 3, [0.5] * 3)])
    loader = DataLoader(datasets.ImageFolder(args.data, tf), batch_size=args.batch_size, shuffle=True,
                        num_workers=8, drop_last=True, pin_memory=True)
    G, D = M.Generator().to(device), M.Discriminator().to(device)
    G.apply(M.weights_init)
    D.apply(M.weights_init)
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.0, 0.9))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.9))
    fixed_z = G.sample_z(64, device)
    data = infinite(loader)

    G.enable_probe()
    d_run, g_run = 0.0, 0.0
    for it in range(1, args.iters + 1):
        G.probe.enabled = it % args.probe_every == 0
        for _ in range(args.n_dis):
            real, _ = next(data)
            real = real.to(device, non_blocking=True)
            with torch.no_grad():
                fake = G(G.sample_z(real.shape[0], device))
            d_loss = d_hinge(D(real), D(fake))
            opt_d.zero_grad(set_to_none=True)
            d_loss.backward()
            opt_d.step()

        g_loss = g_hinge(D(G(G.sample_z(args.batch_size, device))))
        opt_g.zero_grad(set_to_none=True)
        g_loss.backward()
        opt_g.step()

        d_run = 0.98 * d_run + 0.02 * d_loss.item()
        g_run = 0.98 * g_run + 0.02 * g_loss.item()
        if it % args.probe_every == 0:
            logger.info("it %d D %.3f G %.3f | %s", it, d_run, g_run, G.probe.summary())
            with torch.no_grad():
                vutils.save_image(G(fixed_z) * 0.5 + 0.5, os.path.join(args.out, f"{it:07d}.png"), nrow=8)
            torch.save({"G": G.state_dict(), "D": D.state_dict(), "it": it}, os.path.join(args.out, "last.pt"))
    G.disable_probe()


if __name__ == "__main__":
    main()
