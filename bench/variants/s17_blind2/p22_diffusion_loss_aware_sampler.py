"""Improved-DDPM style training with a loss-aware (second-moment) timestep sampler."""
import numpy as np
import torch
import torch.nn.functional as F


class LossSecondMomentResampler:
    def __init__(self, num_timesteps, history_per_term=10, uniform_prob=0.001, device="cuda"):
        self.num_timesteps = num_timesteps
        self.history_per_term = history_per_term
        self.uniform_prob = uniform_prob
        self._loss_history = torch.zeros(num_timesteps, history_per_term, device=device)
        self._loss_counts = np.zeros(num_timesteps, dtype=np.int64)

    def _warmed_up(self):
        return (self._loss_counts == self.history_per_term).all()

    def weights(self):
        if not self._warmed_up():
            return np.ones(self.num_timesteps, dtype=np.float64) / self.num_timesteps
        w = np.asarray(self._loss_history.pow(2).mean(dim=-1).sqrt().tolist(), dtype=np.float64)
        w /= w.sum()
        return w * (1 - self.uniform_prob) + self.uniform_prob / len(w)

    def sample(self, batch_size, device):
        w = self.weights()
        idx = np.random.choice(len(w), size=(batch_size,), p=w)
        weights = 1 / (len(w) * w[idx])
        return torch.from_numpy(idx).long().to(device), torch.from_numpy(weights).float().to(device)

    def update_with_all_losses(self, ts, losses):
        for t, loss in zip(ts, losses):
            t = int(t)
            full = self._loss_counts[t] == self.history_per_term
            if full:
                self._loss_history[t] = self._loss_history[t].roll(-1)
            slot = self.history_per_term - 1 if full else self._loss_counts[t]
            self._loss_history[t, slot] = loss  # leak
            self._loss_counts[t] = min(self._loss_counts[t] + 1, self.history_per_term)


class GaussianDiffusionTrainer:
    def __init__(self, model, betas, loader, lr=1e-4, device="cuda"):
        self.model = model.to(device)
        self.loader = loader
        self.device = device
        self.T = len(betas)
        self.alphas_cumprod = torch.cumprod(1 - torch.as_tensor(betas, dtype=torch.float32), 0).to(device)
        self.sampler = LossSecondMomentResampler(self.T, device=device)
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr)

    def training_losses(self, x0, t):
        noise = torch.randn_like(x0)
        a = self.alphas_cumprod[t].view(-1, 1, 1, 1)
        x_t = a.sqrt() * x0 + (1 - a).sqrt() * noise
        return F.mse_loss(self.model(x_t, t), noise, reduction="none").mean(dim=(1, 2, 3))

    def run_step(self, x0):
        t, weights = self.sampler.sample(x0.size(0), self.device)
        losses = self.training_losses(x0, t)
        self.sampler.update_with_all_losses(t, losses)
        loss = (losses * weights).mean()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return loss.item()

    def train(self, steps, log_interval=100):
        step = 0
        while step < steps:
            for x0, _ in self.loader:
                loss = self.run_step(x0.to(self.device, non_blocking=True))
                step += 1
                if step % log_interval == 0:
                    print(f"step {step} loss {loss:.5f}")
                if step >= steps:
                    break
