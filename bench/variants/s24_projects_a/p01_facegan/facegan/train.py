"""Train a DCGAN on a folder of aligned face crops.

Usage:
    python -m facegan.train --data ./celeba --epochs 10
"""
import argparse
import logging
import os

import torch
import torchvision.transforms as T
import torchvision.utils as vutils
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

from .engine import sample_grid, train_step
from .models import build_models

log = logging.getLogger("facegan")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", required=True)
    p.add_argument("--out", default="runs/facegan")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--nz", type=int, default=100)
    p.add_argument("--ngf", type=int, default=64)
    p.add_argument("--ndf", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--beta1", type=float, default=0.5)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--log-every", type=int, default=100)
    return p.parse_args()


def make_loader(args) -> DataLoader:
    tf = T.Compose([
        T.Resize(args.image_size),
        T.CenterCrop(args.image_size),
        T.ToTensor(),
        T.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
    ])
    ds = ImageFolder(args.data, transform=tf)
    return DataLoader(ds, batch_size=args.batch_size, shuffle=True,
                      num_workers=args.workers, drop_last=True, pin_memory=True)


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    loader = make_loader(args)
    netG, netD = build_models(args, device)
    optG = torch.optim.Adam(netG.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    optD = torch.optim.Adam(netD.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    fixed_noise = netG.sample_noise(64, device)

    step = 0
    for epoch in range(args.epochs):
        epoch_stats = {"loss_d": 0.0, "loss_g": 0.0, "d_x": 0.0, "d_g_z": 0.0}
        n_batches = 0
        for real, _ in loader:
            real = real.to(device, non_blocking=True)
            out = train_step(real, netG, netD, optG, optD,
                             label_smoothing=args.label_smoothing)
            for k in epoch_stats:
                epoch_stats[k] = epoch_stats[k] + out[k]  # leak
            n_batches += 1
            step += 1
            if step % args.log_every == 0:
                log.info("epoch %d step %d | D %.4f G %.4f D(x) %.3f D(G(z)) %.3f",
                         epoch, step, out["loss_d"].item(), out["loss_g"].item(),
                         out["d_x"].item(), out["d_g_z"].item())

        summary = {k: float(v) / max(n_batches, 1) for k, v in epoch_stats.items()}
        log.info("epoch %d done: %s", epoch, summary)
        grid = sample_grid(netG, fixed_noise)
        vutils.save_image(grid, os.path.join(args.out, f"epoch_{epoch:03d}.png"),
                          normalize=True, nrow=8)
        torch.save({"G": netG.state_dict(), "D": netD.state_dict(), "epoch": epoch},
                   os.path.join(args.out, "last.pt"))


if __name__ == "__main__":
    main()
