"""Soft Actor-Critic learner. Scalars are logged lazily so the update loop rarely syncs the GPU."""
from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter

logger = logging.getLogger(__name__)

Thunk = Callable[[], Dict[str, float]]


@dataclass
class SACConfig:
    gamma: float = 0.99
    tau: float = 0.005
    actor_lr: float = 3e-4
    critic_lr: float = 3e-4
    alpha_lr: float = 3e-4
    init_alpha: float = 0.2
    target_entropy: Optional[float] = None
    log_interval: int = 1000


class ScalarHistory:
    """Collects thunks producing scalars; they are resolved and dropped at each flush."""

    def __init__(self) -> None:
        self._entries: List[Tuple[int, Thunk]] = []

    def defer(self, step: int, fn: Thunk) -> None:
        self._entries.append((step, fn))

    def export(self, writer: SummaryWriter) -> None:
        for step, fn in self._entries:
            for tag, value in fn().items():
                writer.add_scalar(tag, value, step)
        self._entries.clear()
        writer.flush()


class SAC:
    def __init__(self, actor: nn.Module, critic: nn.Module, action_dim: int,
                 cfg: SACConfig, writer: SummaryWriter, device: str = "cuda"):
        self.cfg = cfg
        self.device = torch.device(device)
        self.actor = actor.to(self.device)
        self.critic = critic.to(self.device)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.log_alpha = torch.tensor(float(cfg.init_alpha), device=self.device).log().requires_grad_()
        self.target_entropy = cfg.target_entropy if cfg.target_entropy is not None else -float(action_dim)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=cfg.actor_lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=cfg.critic_lr)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=cfg.alpha_lr)
        self.writer = writer
        self.history = ScalarHistory()
        self.step = 0

    @property
    def alpha(self) -> torch.Tensor:
        return self.log_alpha.exp()

    def _soft_update(self) -> None:
        with torch.no_grad():
            for p, tp in zip(self.critic.parameters(), self.critic_target.parameters()):
                tp.mul_(1.0 - self.cfg.tau).add_(p, alpha=self.cfg.tau)

    def update(self, batch: Dict[str, torch.Tensor]) -> None:
        obs, act, rew = batch["obs"], batch["act"], batch["rew"]
        next_obs, done = batch["next_obs"], batch["done"]

        with torch.no_grad():
            next_a, next_logp = self.actor.sample(next_obs)
            tq1, tq2 = self.critic_target(next_obs, next_a)
            q_next = torch.min(tq1, tq2) - self.alpha * next_logp
            target = rew + self.cfg.gamma * (1.0 - done) * q_next

        q1, q2 = self.critic(obs, act)
        critic_loss = F.mse_loss(q1, target) + F.mse_loss(q2, target)
        self.critic_opt.zero_grad(set_to_none=True)
        critic_loss.backward()
        self.critic_opt.step()

        new_a, logp = self.actor.sample(obs)
        q1_pi, q2_pi = self.critic(obs, new_a)
        actor_loss = (self.alpha.detach() * logp - torch.min(q1_pi, q2_pi)).mean()
        self.actor_opt.zero_grad(set_to_none=True)
        actor_loss.backward()
        self.actor_opt.step()

        alpha_loss = -(self.log_alpha * (logp.detach() + self.target_entropy)).mean()
        self.alpha_opt.zero_grad(set_to_none=True)
        alpha_loss.backward()
        self.alpha_opt.step()

        self._soft_update()
        self.step += 1
        stats = {"train/critic_loss": critic_loss.detach(), "train/actor_loss": actor_loss.detach(), "train/entropy": -logp.detach().mean()}
        self.history.defer(self.step, lambda: {k: v.item() for k, v in stats.items()})
        if self.step % self.cfg.log_interval == 0:
            self.history.export(self.writer)

    def close(self) -> None:
        logger.info("flushing deferred scalars at step %d", self.step)
        self.history.export(self.writer)
        self.writer.close()
