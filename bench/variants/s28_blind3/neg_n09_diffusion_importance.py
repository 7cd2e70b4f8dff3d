"""DDPM training loop with EMA weights and loss-aware timestep sampling."""
import copy
import logging
from collections import defaultdict, deque

import numpy as np
import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class LossSecondMomentSampler:
    """Sample t proportionally to sqrt(E[L_t^2]) once every t has enough history."""

    def __init__(self, num_timesteps: int, history_per_term: int = 10, uniform_prob: float = 0.001):
        self.num_timesteps = num_timesteps
        self.history_per_term = history_per_term
        self.uniform_prob = uniform_prob
        self._history = defaultdict(lambda: deque(maxlen=history_per_term))

    def warmed_up(self) -> bool:
        return all(len(self._history[t]) >= self.history_per_term for t in range(self.num_timesteps))

    def weights(self) -> np.ndarray:
        if not self.warmed_up():
            return np.ones(self.num_timesteps, dtype=np.float64)
        second_moment = np.array([
            np.mean(np.square(self._history[t]))
            for t in range(self.num_timesteps)
        ])
        w = np.sqrt(second_moment)
        w /= w.sum()
        return w * (1 - self.uniform_prob) + self.uniform_prob / len(w)

    def sample(self, batch_size: int, device):
        w = self.weights()
        p = w / w.sum()
        idx = np.random.choice(len(p), size=(batch_size,), p=p)
        weights = 1 / (len(p) * p[idx])
        return torch.from_numpy(idx).long().to(device), torch.from_numpy(weights).float().to(device)

    def update_with_local_losses(self, timesteps: torch.Tensor, losses: torch.Tensor) -> None:
        for t, loss in zip(timesteps.tolist(), losses.detach().cpu().tolist()):
            self._history[t].append(loss)


class DiffusionTrainer:
    def __init__(self, model, diffusion, data_iter, cfg):
        self.model = model
        self.diffusion = diffusion
        self.data_iter = data_iter
        self.cfg = cfg
        self.ema = copy.deepcopy(model).eval().requires_grad_(False)
        self.opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg.get("wd", 0.0))
        self.sampler = LossSecondMomentSampler(diffusion.num_timesteps)
        self.step = 0

    @torch.no_grad()
    def update_ema(self, decay):
        for p_ema, p in zip(self.ema.parameters(), self.model.parameters()):
            p_ema.lerp_(p, 1.0 - decay)
        for b_ema, b in zip(self.ema.buffers(), self.model.buffers()):
            b_ema.copy_(b)

    def compute_losses(self, x0, cond):
        t, weights = self.sampler.sample(x0.shape[0], x0.device)
        noise = torch.randn_like(x0)
        x_t = self.diffusion.q_sample(x0, t, noise=noise)
        pred = self.model(x_t, t, cond)
        per_sample = F.mse_loss(pred, noise, reduction="none").mean(dim=(1, 2, 3))
        return t, per_sample, weights

    def run_step(self):
        x0, cond = next(self.data_iter)
        x0, cond = x0.cuda(non_blocking=True), cond.cuda(non_blocking=True)
        self.opt.zero_grad(set_to_none=True)
        t, per_sample, weights = self.compute_losses(x0, cond)
        self.sampler.update_with_local_losses(t, per_sample)
        loss = (per_sample * weights).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.get("clip", 1.0))
        self.opt.step()
        self.update_ema(self.cfg.get("ema_decay", 0.9999))
        self.step += 1
        return loss.item()

    def run(self):
        while self.step < self.cfg["total_steps"]:
            loss = self.run_step()
            if self.step % self.cfg.get("log_every", 100) == 0:
                logger.info("step %d loss %.5f warm=%s", self.step, loss, self.sampler.warmed_up())
            if self.step % self.cfg.get("save_every", 10_000) == 0:
                torch.save({"model": self.model.state_dict(), "ema": self.ema.state_dict(),
                            "step": self.step}, f"ckpt_{self.step:07d}.pt")
