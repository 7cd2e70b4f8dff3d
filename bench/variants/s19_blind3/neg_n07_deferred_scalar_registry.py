"""accelerate-based DDPM training with sync-free scalar logging.

Reading ``loss.item()`` every step forces a device sync, so step handlers
register *deferred* scalar readers that are only evaluated when we log.
"""
import argparse
import logging
import math
from collections import defaultdict
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator

logger = logging.getLogger("ddpm")

_STEP_HANDLERS = defaultdict(list)
_DEFERRED_SCALARS = {}


def on(event):
    def deco(fn):
        _STEP_HANDLERS[event].append(fn)
        return fn
    return deco


def fire(event, ctx):
    for fn in _STEP_HANDLERS[event]:
        fn(ctx)


@on("step_end")
def defer_loss(ctx):
    mse = ctx.outputs["loss"].detach()
    _DEFERRED_SCALARS[ctx.global_step] = lambda: {"train/loss": mse.item()}


@on("step_end")
def log_lr(ctx):
    ctx.last_lr = ctx.scheduler.get_last_lr()[0]


def flush_scalars(accelerator, step):
    reader = _DEFERRED_SCALARS.pop(step, None)
    if reader is not None:
        accelerator.log(reader(), step=step)
    # readers for steps we decided not to log are simply dropped
    _DEFERRED_SCALARS.clear()


def cosine_beta_schedule(timesteps, s=0.008):
    x = torch.linspace(0, timesteps, timesteps + 1)
    ac = torch.cos(((x / timesteps) + s) / (1 + s) * math.pi * 0.5) ** 2
    ac = ac / ac[0]
    return torch.clip(1 - (ac[1:] / ac[:-1]), 0.0001, 0.9999)


class TinyUNet(nn.Module):
    def __init__(self, ch=32, t_dim=64):
        super().__init__()
        self.t_mlp = nn.Sequential(nn.Linear(1, t_dim), nn.SiLU(), nn.Linear(t_dim, ch))
        self.down = nn.Conv2d(3, ch, 3, padding=1)
        self.mid = nn.Conv2d(ch, ch, 3, padding=1)
        self.up = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, x, t):
        temb = self.t_mlp(t.float().unsqueeze(-1) / 1000.0)[:, :, None, None]
        h = F.silu(self.down(x)) + temb
        h = F.silu(self.mid(h))
        return self.up(h)


def training_step(model, batch, alphas_cumprod, num_timesteps):
    noise = torch.randn_like(batch)
    t = torch.randint(0, num_timesteps, (batch.size(0),), device=batch.device)
    a = alphas_cumprod.to(batch.device)[t].view(-1, 1, 1, 1)
    noisy = a.sqrt() * batch + (1 - a).sqrt() * noise
    pred = model(noisy, t)
    return {"loss": F.mse_loss(pred, noise), "t": t}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_steps", type=int, default=10000)
    parser.add_argument("--log_every", type=int, default=50)
    parser.add_argument("--timesteps", type=int, default=1000)
    parser.add_argument("--mixed_precision", default="no")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    accelerator = Accelerator(mixed_precision=args.mixed_precision, log_with="tensorboard", project_dir="runs")
    accelerator.init_trackers("ddpm-tiny")
    betas = cosine_beta_schedule(args.timesteps)
    alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)

    model = TinyUNet()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 500))
    model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)
    ctx = SimpleNamespace(global_step=0, outputs=None, scheduler=scheduler, last_lr=None)

    for step in range(args.train_steps):
        batch = torch.randn(32, 3, 32, 32, device=accelerator.device)
        with accelerator.accumulate(model):
            outputs = training_step(model, batch, alphas_cumprod, args.timesteps)
            accelerator.backward(outputs["loss"])
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        ctx.global_step, ctx.outputs = step, outputs
        fire("step_end", ctx)
        if step % args.log_every == 0:
            flush_scalars(accelerator, step)
    accelerator.end_training()


if __name__ == "__main__":
    main()
