"""EMA weights and preview-producing sampler for the latent diffusion training loop."""
import copy
from collections import deque
from typing import Deque, List, Optional

import torch
import torch.nn as nn


class EMA:
    def __init__(self, model: nn.Module, decay: float = 0.9999, warmup: int = 2000):
        self.decay = decay
        self.warmup = warmup
        self.num_updates = 0
        self.shadow = copy.deepcopy(model).eval()
        for p in self.shadow.parameters():
            p.requires_grad_(False)

    def current_decay(self) -> float:
        return min(self.decay, (1 + self.num_updates) / (10 + self.num_updates))

    @torch.no_grad()
    def update(self, model: nn.Module):
        self.num_updates += 1
        d = self.current_decay() if self.num_updates > self.warmup else 0.0
        for s, p in zip(self.shadow.parameters(), model.parameters()):
            s.lerp_(p.detach(), 1.0 - d)
        for sb, b in zip(self.shadow.buffers(), model.buffers()):
            sb.copy_(b)

    def state_dict(self):
        return {"shadow": self.shadow.state_dict(), "num_updates": self.num_updates}


class PreviewSampler:
    """Euler sampler that keeps a short window of x0 predictions for the dashboard."""

    def __init__(self, denoiser: nn.Module, sigmas: torch.Tensor, keep_last: int = 4):
        self.denoiser = denoiser
        self.sigmas = sigmas
        self.recent_x0: Deque[torch.Tensor] = deque(maxlen=keep_last)

    @torch.no_grad()
    def sample(self, cond: torch.Tensor, shape, return_intermediates: bool = False,
               every: int = 5, generator: Optional[torch.Generator] = None):
        device = cond.device
        sigmas = self.sigmas.to(device)
        x = torch.randn(shape, device=device, generator=generator) * sigmas[0]
        intermediates: List[torch.Tensor] = []
        for i in range(len(sigmas) - 1):
            s, s_next = sigmas[i], sigmas[i + 1]
            x0 = self.denoiser(x, s.expand(shape[0]), cond)
            d = (x - x0) / s
            x = x + d * (s_next - s)
            if i % every == 0:
                snap = x0[:4].float().cpu()
                self.recent_x0.append(snap)
                if return_intermediates:
                    intermediates.append(snap)
        if return_intermediates:
            return x, intermediates
        return x

    def dashboard_frames(self) -> List[torch.Tensor]:
        return list(self.recent_x0)


def train_step(model, ema: EMA, opt, batch, loss_fn, step: int, sampler: PreviewSampler,
               preview_every: int = 1000):
    latents, cond = batch
    loss = loss_fn(model, latents, cond)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    ema.update(model)
    if step % preview_every == 0:
        sampler.denoiser = ema.shadow
        sampler.sample(cond[:4], (4,) + tuple(latents.shape[1:]))
    return loss.item()
