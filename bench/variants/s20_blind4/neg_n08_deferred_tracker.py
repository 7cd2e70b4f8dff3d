#!/usr/bin/env python
"""Diffusion (DDPM, epsilon-prediction) fine-tuning with accelerate.

Logging is deferred: scalars are queued as callables and materialised in one go
every ``--log_every`` optimizer steps, which avoids a GPU sync on every step.
"""
import argparse
import functools
import logging
import math
import os

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger(__name__)


class DeferredLog:
    def __init__(self, accelerator: Accelerator, flush_every: int = 50):
        self.accelerator = accelerator
        self.flush_every = flush_every
        self._queue = []

    def _emit(self, name, value, step):
        self.accelerator.log({name: float(value)}, step=step)

    def add(self, name, value, step):
        self._queue.append(functools.partial(self._emit, name, value.detach(), step))
        if len(self._queue) >= self.flush_every:
            self.flush()

    def flush(self):
        for fn in self._queue:
            fn()
        self._queue = []


def cosine_alphas_cumprod(T, s=0.008):
    t = torch.linspace(0, T, T + 1, dtype=torch.float64) / T
    f = torch.cos((t + s) / (1 + s) * math.pi / 2) ** 2
    return (f[1:] / f[0]).clamp(1e-5, 1.0).float()


class TinyUNet(torch.nn.Module):
    def __init__(self, ch=64, T=1000):
        super().__init__()
        self.t_emb = torch.nn.Embedding(T, ch)
        self.inp = torch.nn.Conv2d(3, ch, 3, padding=1)
        self.mid = torch.nn.Sequential(torch.nn.SiLU(), torch.nn.Conv2d(ch, ch, 3, padding=1), torch.nn.SiLU())
        self.out = torch.nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, x, t):
        h = self.inp(x) + self.t_emb(t)[:, :, None, None]
        return self.out(self.mid(h))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--output_dir", default="ddpm-out")
    p.add_argument("--train_steps", type=int, default=100_000)
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--grad_accum", type=int, default=2)
    p.add_argument("--num_timesteps", type=int, default=1000)
    p.add_argument("--log_every", type=int, default=50)
    p.add_argument("--mixed_precision", default="no")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator(
        gradient_accumulation_steps=args.grad_accum,
        mixed_precision=args.mixed_precision,
        log_with="tensorboard",
        project_dir=args.output_dir,
    )
    logging.basicConfig(level=logging.INFO)
    set_seed(args.seed)
    accelerator.init_trackers("ddpm")

    images = torch.rand(4096, 3, 32, 32) * 2 - 1
    loader = DataLoader(TensorDataset(images), batch_size=args.batch_size, shuffle=True, drop_last=True)
    unet = TinyUNet(T=args.num_timesteps)
    opt = torch.optim.AdamW(unet.parameters(), lr=args.lr)
    unet, opt, loader = accelerator.prepare(unet, opt, loader)
    acp = cosine_alphas_cumprod(args.num_timesteps).to(accelerator.device)
    tracker = DeferredLog(accelerator, flush_every=args.log_every)

    global_step = 0
    while global_step < args.train_steps:
        for (x0,) in loader:
            with accelerator.accumulate(unet):
                noise = torch.randn_like(x0)
                t = torch.randint(0, args.num_timesteps, (x0.size(0),), device=x0.device)
                a = acp[t].view(-1, 1, 1, 1)
                xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
                mse = F.mse_loss(unet(xt, t), noise)
                accelerator.backward(mse)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(unet.parameters(), 1.0)
                opt.step()
                opt.zero_grad()
            if accelerator.sync_gradients:
                global_step += 1
                tracker.add("train/mse", mse, global_step)
                if global_step >= args.train_steps:
                    break

    tracker.flush()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        os.makedirs(args.output_dir, exist_ok=True)
        torch.save(accelerator.unwrap_model(unet).state_dict(), os.path.join(args.output_dir, "unet.pt"))
    accelerator.end_training()


if __name__ == "__main__":
    main()
