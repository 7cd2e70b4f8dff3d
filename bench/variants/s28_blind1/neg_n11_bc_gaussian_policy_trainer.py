"""Behaviour cloning of a Gaussian policy from expert demonstrations, with DAgger relabelling rounds."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Dict, Optional, Protocol

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Independent, Normal
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger("bc")


class MetricLogger(Protocol):
    def log(self, metrics: Dict[str, float], step: int) -> None: ...


@dataclass
class BCConfig:
    lr: float = 3e-4
    l2_coef: float = 1e-4
    max_grad_norm: float = 1.0
    batch_size: int = 256
    log_every: int = 200
    dagger_rounds: int = 5
    dagger_steps: int = 5000


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, act_dim))
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5))

    def forward(self, obs: torch.Tensor) -> Independent:
        mu = self.net(obs)
        std = self.log_std.clamp(-5.0, 2.0).exp().expand_as(mu)
        return Independent(Normal(mu, std), 1)


class BCTrainer:
    def __init__(self, policy: GaussianPolicy, cfg: BCConfig, logger: Optional[MetricLogger] = None,
                 device: str = "cuda"):
        self.policy = policy.to(device)
        self.cfg = cfg
        self.logger = logger
        self.device = device
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=cfg.lr)
        self._entropy_sum = 0.0
        self._n_updates = 0

    def _record(self, nll: torch.Tensor, dist: Independent) -> None:
        self._n_updates += 1
        self._entropy_sum += dist.entropy().mean().item()
        if self.logger is not None and self._n_updates % self.cfg.log_every == 0:
            self.logger.log({"bc/nll": nll.item(),
                             "bc/entropy_avg": float(self._entropy_sum) / self._n_updates},
                            step=self._n_updates)

    def train_step(self, obs: torch.Tensor, expert_actions: torch.Tensor) -> float:
        dist = self.policy(obs)
        nll = -dist.log_prob(expert_actions).mean()
        l2 = sum(p.pow(2).sum() for n, p in self.policy.named_parameters() if "weight" in n)
        loss = nll + self.cfg.l2_coef * l2
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.policy.parameters(), self.cfg.max_grad_norm)
        self.opt.step()
        self._record(nll, dist)
        return loss.item()

    def fit(self, obs: np.ndarray, actions: np.ndarray, epochs: int) -> None:
        ds = TensorDataset(torch.as_tensor(obs, dtype=torch.float32), torch.as_tensor(actions, dtype=torch.float32))
        loader = DataLoader(ds, batch_size=self.cfg.batch_size, shuffle=True, drop_last=True)
        for epoch in range(epochs):
            losses = [self.train_step(o.to(self.device), a.to(self.device)) for o, a in loader]
            log.info("epoch %d  loss %.4f  (%d transitions)", epoch, np.mean(losses), len(ds))

    @torch.no_grad()
    def rollout_and_relabel(self, env, expert, n_steps: int):
        obs_buf, act_buf = [], []
        obs, _ = env.reset()
        for _ in range(n_steps):
            obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device).unsqueeze(0)
            action = self.policy(obs_t).mean.squeeze(0).cpu().numpy()
            obs_buf.append(obs)
            act_buf.append(expert.act(obs))
            obs, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                obs, _ = env.reset()
        return np.asarray(obs_buf), np.asarray(act_buf)

    def dagger(self, env, expert, obs: np.ndarray, actions: np.ndarray, epochs_per_round: int = 10) -> None:
        self.fit(obs, actions, epochs_per_round)
        for r in range(self.cfg.dagger_rounds):
            new_obs, new_act = self.rollout_and_relabel(env, expert, self.cfg.dagger_steps)
            obs, actions = np.concatenate([obs, new_obs]), np.concatenate([actions, new_act])
            log.info("DAgger round %d: dataset size %d", r, len(obs))
            self.fit(obs, actions, epochs_per_round)
