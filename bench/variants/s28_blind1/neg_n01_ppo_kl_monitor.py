"""Clipped PPO update with KL-based early stopping of the optimisation epochs."""
from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from typing import Deque, Dict, Iterator, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

log = logging.getLogger(__name__)


@dataclass
class PPOConfig:
    lr: float = 3e-4
    clip_range: float = 0.2
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    n_epochs: int = 10
    batch_size: int = 64
    target_kl: Optional[float] = 0.015
    kl_window: int = 32


class ActorCritic(nn.Module):
    def __init__(self, obs_dim: int, n_actions: int, hidden: int = 64):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(obs_dim, hidden), nn.Tanh(),
            nn.Linear(hidden, hidden), nn.Tanh(),
        )
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor):
        h = self.body(obs)
        dist = Categorical(logits=self.pi(h))
        return dist.log_prob(actions), dist.entropy(), self.v(h).squeeze(-1)


class KLMonitor:
    """Per-minibatch approx-KL values, reported as a moving average."""

    def __init__(self, window: int):
        self.window = window
        self.values: Deque[float] = deque(maxlen=window)

    def push(self, approx_kl: torch.Tensor) -> None:
        self.values.append(float(approx_kl))

    def recent(self) -> float:
        tail = list(self.values)
        if not tail:
            return 0.0
        return float(np.mean(tail))


def iterate_minibatches(n: int, batch_size: int) -> Iterator[np.ndarray]:
    idx = np.random.permutation(n)
    for start in range(0, n, batch_size):
        yield idx[start:start + batch_size]


class PPO:
    def __init__(self, policy: ActorCritic, cfg: PPOConfig, device: str = "cpu"):
        self.policy = policy.to(device)
        self.cfg = cfg
        self.device = device
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=cfg.lr, eps=1e-5)
        self.kl_monitor = KLMonitor(cfg.kl_window)
        self.n_updates = 0

    def learn(self, rollout: Dict[str, torch.Tensor]) -> Dict[str, float]:
        cfg = self.cfg
        obs, actions = rollout["obs"], rollout["actions"]
        old_log_prob = rollout["log_prob"]
        advantages, returns = rollout["advantages"], rollout["returns"]
        pg_losses, v_losses, clip_fracs = [], [], []
        stop = False

        for epoch in range(cfg.n_epochs):
            for mb in iterate_minibatches(obs.shape[0], cfg.batch_size):
                mb = torch.as_tensor(mb, device=self.device)
                log_prob, entropy, values = self.policy.evaluate_actions(obs[mb], actions[mb])
                adv = advantages[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)

                log_ratio = log_prob - old_log_prob[mb]
                ratio = log_ratio.exp()
                pg_loss = torch.max(
                    -adv * ratio,
                    -adv * torch.clamp(ratio, 1 - cfg.clip_range, 1 + cfg.clip_range),
                ).mean()
                v_loss = F.mse_loss(values, returns[mb])
                loss = pg_loss + cfg.vf_coef * v_loss - cfg.ent_coef * entropy.mean()

                with torch.no_grad():
                    approx_kl = ((ratio - 1) - log_ratio).mean()
                self.kl_monitor.push(approx_kl)
                if cfg.target_kl is not None and approx_kl.item() > 1.5 * cfg.target_kl:
                    log.info("early stop at epoch %d, approx_kl=%.4f", epoch, approx_kl.item())
                    stop = True
                    break

                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.policy.parameters(), cfg.max_grad_norm)
                self.optimizer.step()

                pg_losses.append(pg_loss.item())
                v_losses.append(v_loss.item())
                clip_fracs.append(((ratio - 1).abs() > cfg.clip_range).float().mean().item())
            if stop:
                break

        self.n_updates += 1
        return {
            "train/policy_loss": float(np.mean(pg_losses)) if pg_losses else 0.0,
            "train/value_loss": float(np.mean(v_losses)) if v_losses else 0.0,
            "train/clip_fraction": float(np.mean(clip_fracs)) if clip_fracs else 0.0,
            "train/approx_kl": self.kl_monitor.recent(),
            "train/n_updates": float(self.n_updates),
        }
