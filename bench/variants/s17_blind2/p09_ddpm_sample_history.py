"""DDPM training runner with EMA weights and periodic sample snapshots."""
import copy
import math

import torch
import torch.nn.functional as F
from torchvision.utils import make_grid, save_image


def cosine_beta_schedule(timesteps, s=0.008):
    t = torch.linspace(0, timesteps, timesteps + 1, dtype=torch.float64) / timesteps
    alphas_cumprod = torch.cos((t + s) / (1 + s) * math.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return betas.clamp(0, 0.999).float()


class DiffusionRunner:
    def __init__(self, unet, loader, timesteps=1000, lr=2e-4, ema_decay=0.9999,
                 sample_every=2000, device="cuda"):
        self.device = device
        self.model = unet.to(device)
        self.ema = copy.deepcopy(self.model).eval().requires_grad_(False)
        self.loader = loader
        self.T = timesteps
        betas = cosine_beta_schedule(timesteps).to(device)
        self.betas = betas
        self.alphas_cumprod = torch.cumprod(1 - betas, dim=0)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.ema_decay = ema_decay
        self.sample_every = sample_every
        self.sample_history = []
        self.step = 0

    def q_sample(self, x0, t, noise):
        a = self.alphas_cumprod[t].view(-1, 1, 1, 1)
        return a.sqrt() * x0 + (1 - a).sqrt() * noise

    @torch.no_grad()
    def update_ema(self):
        for pe, pm in zip(self.ema.parameters(), self.model.parameters()):
            pe.lerp_(pm, 1 - self.ema_decay)

    @torch.no_grad()
    def sample(self, n=16, shape=(3, 64, 64)):
        x = torch.randn(n, *shape, device=self.device)
        for i in reversed(range(self.T)):
            t = torch.full((n,), i, device=self.device, dtype=torch.long)
            eps = self.ema(x, t)
            a_bar, beta = self.alphas_cumprod[i], self.betas[i]
            x = (x - beta / (1 - a_bar).sqrt() * eps) / (1 - beta).sqrt()
            if i > 0:
                x = x + beta.sqrt() * torch.randn_like(x)
        return x.clamp(-1, 1)

    def _snapshot(self):
        samples = self.sample()
        self.sample_history.append(samples)  # leak
        grid = make_grid(torch.cat(self.sample_history[-4:]), nrow=16, normalize=True, value_range=(-1, 1))
        save_image(grid, f"samples/step_{self.step:07d}.png")

    def train(self, total_steps=500_000):
        while self.step < total_steps:
            for x0, _ in self.loader:
                x0 = x0.to(self.device, non_blocking=True)
                t = torch.randint(0, self.T, (x0.size(0),), device=self.device)
                noise = torch.randn_like(x0)
                loss = F.mse_loss(self.model(self.q_sample(x0, t, noise), t), noise)
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                self.opt.step()
                self.update_ema()
                self.step += 1
                if self.step % 100 == 0:
                    print(f"step {self.step} loss {loss.item():.4f}")
                if self.step % self.sample_every == 0:
                    self._snapshot()
                if self.step >= total_steps:
                    break
