"""DDPM training loop for the ``smalldiff`` package.

Besides the usual epsilon-prediction loss, the trainer reports the loss per
timestep quartile at the end of every epoch.  Early-t buckets are where an
under-trained model usually shows problems first.
"""
import logging
import math
import os
from collections import defaultdict

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from smalldiff.unet import UNet2DModel
from smalldiff.utils import ema_update, save_image_grid

logger = logging.getLogger(__name__)


def cosine_alphas_cumprod(timesteps, s=0.008):
    steps = timesteps + 1
    x = torch.linspace(0, timesteps, steps, dtype=torch.float64)
    ac = torch.cos(((x / timesteps) + s) / (1 + s) * math.pi * 0.5) ** 2
    ac = ac / ac[0]
    betas = 1 - (ac[1:] / ac[:-1])
    betas = torch.clip(betas, 0, 0.999)
    return torch.cumprod(1.0 - betas, dim=0).float()


class GaussianDiffusion:
    def __init__(self, num_timesteps=1000):
        self.num_timesteps = num_timesteps
        self.alphas_cumprod = cosine_alphas_cumprod(num_timesteps)

    def q_sample(self, x0, t, noise):
        ac = self.alphas_cumprod.to(x0.device)[t].view(-1, 1, 1, 1)
        return ac.sqrt() * x0 + (1 - ac).sqrt() * noise

    def training_losses(self, model, x0):
        b = x0.shape[0]
        t = torch.randint(0, self.num_timesteps, (b,), device=x0.device)
        noise = torch.randn_like(x0)
        xt = self.q_sample(x0, t, noise)
        eps = model(xt, t)
        per_sample = F.mse_loss(eps, noise, reduction="none").mean(dim=(1, 2, 3))
        return per_sample, t


class DiffusionTrainer:
    def __init__(self, model, dataset, out_dir, lr=2e-4, batch_size=64,
                 num_workers=4, ema_decay=0.9999, n_buckets=4, device="cuda"):
        self.model = model.to(device)
        self.ema_model = UNet2DModel.from_config(model.config).to(device).eval()
        self.ema_model.load_state_dict(model.state_dict())
        self.ema_decay = ema_decay
        self.diffusion = GaussianDiffusion()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=lr, weight_decay=0.0)
        self.loader = DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                 num_workers=num_workers, drop_last=True, pin_memory=True)
        self.out_dir = out_dir
        self.n_buckets = n_buckets
        self.device = device
        self.global_step = 0
        os.makedirs(out_dir, exist_ok=True)

    def _bucket_of(self, t):
        return (t * self.n_buckets // self.diffusion.num_timesteps).clamp(max=self.n_buckets - 1)

    def train_epoch(self, epoch):
        self.model.train()
        per_bucket = defaultdict(list)
        running = 0.0
        for step, (images, _) in enumerate(self.loader):
            images = images.to(self.device, non_blocking=True) * 2 - 1
            per_sample, t = self.diffusion.training_losses(self.model, images)
            loss = per_sample.mean()

            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.opt.step()
            ema_update(self.ema_model, self.model, self.ema_decay)
            self.global_step += 1

            buckets = self._bucket_of(t)
            for b in buckets.unique().tolist():
                per_bucket[b].append(per_sample[buckets == b].mean())  # leak

            running = 0.98 * running + 0.02 * loss.item() if step else loss.item()
            if step % 200 == 0:
                logger.info("epoch %d step %d loss %.4f", epoch, step, running)

        report = {}
        for b in sorted(per_bucket):
            vals = torch.stack(per_bucket[b])
            report[f"q{b}"] = vals.mean().item()
        logger.info("epoch %d per-quartile loss: %s", epoch,
                    ", ".join(f"{k}={v:.4f}" for k, v in report.items()))
        return report

    @torch.no_grad()
    def sample(self, n=16, image_size=32):
        x = torch.randn(n, 3, image_size, image_size, device=self.device)
        ac = self.diffusion.alphas_cumprod.to(self.device)
        for i in reversed(range(self.diffusion.num_timesteps)):
            t = torch.full((n,), i, device=self.device, dtype=torch.long)
            eps = self.ema_model(x, t)
            a_t = ac[i]
            a_prev = ac[i - 1] if i > 0 else torch.tensor(1.0, device=self.device)
            x0 = (x - (1 - a_t).sqrt() * eps) / a_t.sqrt()
            x0 = x0.clamp(-1, 1)
            x = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps
        return (x + 1) / 2

    def fit(self, epochs, sample_every=5):
        for epoch in range(epochs):
            self.train_epoch(epoch)
            if (epoch + 1) % sample_every == 0:
                imgs = self.sample()
                save_image_grid(imgs, os.path.join(self.out_dir, f"samples_{epoch:04d}.png"))
                torch.save({"model": self.model.state_dict(),
                            "ema": self.ema_model.state_dict(),
                            "step": self.global_step},
                           os.path.join(self.out_dir, "last.pt"))
