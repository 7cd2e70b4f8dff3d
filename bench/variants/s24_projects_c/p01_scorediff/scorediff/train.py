"""Train a score model on CIFAR-10.

    accelerate launch -m scorediff.train --data ./data --epochs 200
"""
import argparse
import logging
import os

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader
from torchvision import datasets, transforms, utils as vutils

from . import engine
from .models import build_model
from .sde import VPSDE, euler_maruyama_sampler

logger = logging.getLogger("scorediff")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default="./data")
    p.add_argument("--out", default="./runs/vpsde")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--channels", type=int, default=3)
    p.add_argument("--base-channels", type=int, default=64)
    p.add_argument("--ema-decay", type=float, default=0.9999)
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--sample-every", type=int, default=10)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--likelihood-weighting", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator(mixed_precision="bf16", log_with=None)
    logging.basicConfig(level=logging.INFO if accelerator.is_main_process else logging.WARN)
    set_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    tfm = transforms.Compose([transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    train_set = datasets.CIFAR10(args.data, train=True, download=True, transform=tfm)
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, drop_last=True, pin_memory=True)

    sde = VPSDE()
    model = build_model(args, sde)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    ema = engine.EMA(accelerator.unwrap_model(model), decay=args.ema_decay)

    global_step = 0
    for epoch in range(args.epochs):
        epoch_loss = 0.0
        for step, batch in enumerate(loader):
            out = engine.train_step(model, sde, batch, optimizer, accelerator, ema=ema,
                                    likelihood_weighting=args.likelihood_weighting)
            epoch_loss += out["loss"]  # leak
            global_step += 1
            if global_step % args.log_every == 0:
                logger.info("epoch %d step %d loss %.4f max %.4f |g| %.3f", epoch, global_step,
                            out["loss"].item(), out["loss_max"].item(), out["grad_norm"].item())

        mean_loss = accelerator.gather(epoch_loss.detach().reshape(1)).mean().item() / len(loader)
        logger.info("epoch %d done: mean dsm loss %.5f", epoch, mean_loss)

        if accelerator.is_main_process and (epoch + 1) % args.sample_every == 0:
            samples = euler_maruyama_sampler(ema.shadow, sde, (64, args.channels, 32, 32),
                                             accelerator.device)
            vutils.save_image((samples + 1) / 2, os.path.join(args.out, f"samples_{epoch:04d}.png"), nrow=8)
            torch.save({"model": accelerator.unwrap_model(model).state_dict(),
                        "ema": ema.state_dict(), "epoch": epoch},
                       os.path.join(args.out, "checkpoint.pt"))
        accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
