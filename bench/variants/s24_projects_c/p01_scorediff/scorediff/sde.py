"""Variance-preserving SDE (Song et al., 2021) utilities."""
import math

import torch


class VPSDE:
    """dx = -1/2 beta(t) x dt + sqrt(beta(t)) dW, with a linear beta schedule."""

    def __init__(self, beta_min: float = 0.1, beta_max: float = 20.0, eps: float = 1e-5):
        self.beta_0 = beta_min
        self.beta_1 = beta_max
        self.eps = eps

    @property
    def T(self) -> float:
        return 1.0

    def beta(self, t: torch.Tensor) -> torch.Tensor:
        return self.beta_0 + t * (self.beta_1 - self.beta_0)

    def marginal_prob(self, x: torch.Tensor, t: torch.Tensor):
        """Mean and std of p_t(x | x_0)."""
        log_mean_coeff = -0.25 * t ** 2 * (self.beta_1 - self.beta_0) - 0.5 * t * self.beta_0
        mean = torch.exp(log_mean_coeff)[:, None, None, None] * x
        std = torch.sqrt(1.0 - torch.exp(2.0 * log_mean_coeff))
        return mean, std

    def sample_time(self, batch_size: int, device) -> torch.Tensor:
        return torch.rand(batch_size, device=device) * (self.T - self.eps) + self.eps

    def prior_sampling(self, shape, device) -> torch.Tensor:
        return torch.randn(*shape, device=device)

    def reverse_step(self, score_fn, x: torch.Tensor, t: torch.Tensor, dt: float) -> torch.Tensor:
        """One Euler-Maruyama step of the reverse-time SDE."""
        beta_t = self.beta(t)[:, None, None, None]
        drift = -0.5 * beta_t * x - beta_t * score_fn(x, t)
        noise = torch.randn_like(x)
        return x - drift * dt + torch.sqrt(beta_t * dt) * noise


@torch.no_grad()
def euler_maruyama_sampler(model, sde: VPSDE, shape, device, n_steps: int = 500):
    """Draw samples by integrating the reverse SDE from T to eps."""
    x = sde.prior_sampling(shape, device)
    timesteps = torch.linspace(sde.T, sde.eps, n_steps, device=device)
    dt = (sde.T - sde.eps) / n_steps
    for t_scalar in timesteps:
        t = torch.full((shape[0],), float(t_scalar), device=device)
        x = sde.reverse_step(model, x, t, dt)
    return x.clamp(-1.0, 1.0)


def snr_weight(sde: VPSDE, t: torch.Tensor) -> torch.Tensor:
    """Likelihood weighting lambda(t) = g(t)^2 used by score-flow training."""
    return sde.beta(t) / max(math.fabs(sde.beta_1), 1e-8)
