"""Train a DCGAN on an ImageFolder of face crops (e.g. CelebA aligned).

    python -m dcgan.train --data /datasets/celeba --out runs/dcgan
"""
from __future__ import annotations

import argparse
import logging
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from dcgan import utils
from dcgan.models import Discriminator, Generator

logger = logging.getLogger("dcgan")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--out", default="runs/dcgan")
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--nz", type=int, default=100)
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--beta1", type=float, default=0.5)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--sample-every", type=int, default=500)
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    tf = transforms.Compose([
        transforms.Resize(args.image_size), transforms.CenterCrop(args.image_size),
        transforms.ToTensor(), transforms.Normalize((0.5,) * 3, (0.5,) * 3)])
    loader = DataLoader(datasets.ImageFolder(args.data, tf), batch_size=args.batch_size,
                        shuffle=True, num_workers=args.workers, drop_last=True)

    netG = Generator(args.nz).to(device)
    netD = Discriminator().to(device)
    netG.apply(utils.weights_init)
    netD.apply(utils.weights_init)
    criterion = nn.BCEWithLogitsLoss()
    optD = torch.optim.Adam(netD.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    fixed_noise = torch.randn(64, args.nz, 1, 1, device=device)
    scalars = utils.DeferredScalars(os.path.join(args.out, "scalars.csv"))
    timer = utils.Timer()

    step = 0
    for epoch in range(args.epochs):
        for real, _ in loader:
            real = real.to(device, non_blocking=True)
            b = real.size(0)
            ones = torch.ones(b, device=device)
            zeros = torch.zeros(b, device=device)

            # discriminator: maximise log D(x) + log(1 - D(G(z)))
            noise = torch.randn(b, args.nz, 1, 1, device=device)
            fake = netG(noise)
            d_real = netD(real)
            d_fake = netD(fake.detach())
            loss_d = criterion(d_real, ones) + criterion(d_fake, zeros)
            optD.zero_grad(set_to_none=True)
            loss_d.backward()
            optD.step()

            # generator: non-saturating loss
            d_gen = netD(fake)
            loss_g = criterion(d_gen, ones)
            optG.zero_grad(set_to_none=True)
            loss_g.backward()
            optG.step()

            scalars.set_step(step)
            scalars.defer("loss_d", lambda t=loss_d: t.item())
            scalars.defer("loss_g", lambda t=loss_g: t.item())
            scalars.defer("D(x)", lambda t=d_real: torch.sigmoid(t).mean().item())

            if step % args.sample_every == 0:
                with torch.no_grad():
                    utils.save_grid(netG(fixed_noise), f"{args.out}/samples/{step:07d}.png")
                logger.info("epoch %d step %d (%.1fs) queued scalars=%d", epoch, step,
                            timer.lap(), len(scalars))
            step += 1

        torch.save({"G": netG.state_dict(), "D": netD.state_dict()},
                   os.path.join(args.out, f"ckpt_{epoch:03d}.pt"))
    scalars.dump()


if __name__ == "__main__":
    main()
