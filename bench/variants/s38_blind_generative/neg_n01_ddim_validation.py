"""DDIM sampling utilities used by the validation callback of the latent diffusion trainer."""
from dataclasses import dataclass
from typing import List, Optional

import torch
import torch.nn as nn
from torchvision.utils import make_grid, save_image


@dataclass
class SamplerConfig:
    num_train_steps: int = 1000
    num_inference_steps: int = 50
    eta: float = 0.0
    guidance_scale: float = 4.0
    clip_x0: bool = True


def cosine_alphas_cumprod(num_steps: int, s: float = 0.008) -> torch.Tensor:
    t = torch.linspace(0, num_steps, num_steps + 1, dtype=torch.float64) / num_steps
    f = torch.cos((t + s) / (1 + s) * torch.pi / 2) ** 2
    acp = f / f[0]
    betas = (1 - acp[1:] / acp[:-1]).clamp(max=0.999)
    return torch.cumprod(1 - betas, dim=0).float()


class DDIMSampler:
    def __init__(self, model: nn.Module, cfg: SamplerConfig):
        self.model = model
        self.cfg = cfg
        self.alphas_cumprod = cosine_alphas_cumprod(cfg.num_train_steps)

    def timesteps(self) -> List[int]:
        stride = self.cfg.num_train_steps // self.cfg.num_inference_steps
        return list(range(0, self.cfg.num_train_steps, stride))[::-1]

    @torch.no_grad()
    def sample(self, cond: torch.Tensor, uncond: torch.Tensor, shape, generator: Optional[torch.Generator] = None):
        device = cond.device
        acp = self.alphas_cumprod.to(device)
        x = torch.randn(shape, device=device, generator=generator)
        steps = self.timesteps()
        one = torch.ones((), device=device)
        for i, t in enumerate(steps):
            a_t = acp[t]
            a_prev = acp[steps[i + 1]] if i + 1 < len(steps) else one
            t_batch = torch.full((shape[0],), t, device=device, dtype=torch.long)
            eps_cond, eps_uncond = self.model(
                torch.cat([x, x]), torch.cat([t_batch, t_batch]), torch.cat([cond, uncond])
            ).chunk(2)
            eps = eps_uncond + self.cfg.guidance_scale * (eps_cond - eps_uncond)
            x0 = (x - (1 - a_t).sqrt() * eps) / a_t.sqrt()
            if self.cfg.clip_x0:
                x0 = x0.clamp(-1, 1)
            sigma = self.cfg.eta * ((1 - a_prev) / (1 - a_t) * (1 - a_t / a_prev)).sqrt()
            dir_xt = (1 - a_prev - sigma ** 2).clamp(min=0).sqrt() * eps
            noise = torch.randn(x.shape, device=device, generator=generator)
            x = a_prev.sqrt() * x0 + dir_xt + sigma * noise
        return x


class ValidationCallback:
    def __init__(self, sampler: DDIMSampler, vae: nn.Module, prompts_emb: torch.Tensor,
                 null_emb: torch.Tensor, out_dir: str, every: int = 2000, seed: int = 1234):
        self.sampler = sampler
        self.vae = vae
        self.prompts_emb = prompts_emb
        self.null_emb = null_emb
        self.out_dir = out_dir
        self.every = every
        self.seed = seed

    def __call__(self, step: int, model: nn.Module):
        if step % self.every != 0:
            return
        was_training = model.training
        model.eval()
        device = next(model.parameters()).device
        gen = torch.Generator(device=device).manual_seed(self.seed)
        cond = self.prompts_emb.to(device)
        uncond = self.null_emb.to(device).expand_as(cond)
        latents = self.sampler.sample(cond, uncond, (cond.size(0), 4, 32, 32), generator=gen)
        with torch.no_grad():
            images = self.vae.decode(latents / 0.18215).sample
        grid = make_grid(((images + 1) / 2).clamp(0, 1).float().cpu(), nrow=4)
        save_image(grid, f"{self.out_dir}/val_{step:07d}.png")
        if was_training:
            model.train()
