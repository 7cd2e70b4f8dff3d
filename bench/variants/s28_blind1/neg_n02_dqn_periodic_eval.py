"""Double-DQN agent with periodic greedy evaluation on a separate env instance."""
from __future__ import annotations

import copy
import logging
import random
from dataclasses import dataclass
from typing import Dict

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger("dqn")


@dataclass
class DQNConfig:
    gamma: float = 0.99
    lr: float = 1e-4
    target_update_interval: int = 1000
    eval_episodes: int = 10
    eval_seed: int = 10_000
    max_grad_norm: float = 10.0
    hidden: int = 256


class QNetwork(nn.Module):
    def __init__(self, obs_dim: int, n_actions: int, hidden: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(obs_dim, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, n_actions),
        )

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs)


class DQNAgent:
    def __init__(self, obs_dim: int, n_actions: int, cfg: DQNConfig, device: str = "cuda"):
        self.cfg = cfg
        self.device = torch.device(device)
        self.n_actions = n_actions
        self.q_net = QNetwork(obs_dim, n_actions, cfg.hidden).to(self.device)
        self.target_net = copy.deepcopy(self.q_net).requires_grad_(False)
        self.optimizer = torch.optim.Adam(self.q_net.parameters(), lr=cfg.lr)
        self.num_updates = 0

    def _to_tensor(self, obs: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(obs, dtype=torch.float32, device=self.device).unsqueeze(0)

    @torch.no_grad()
    def act(self, obs: np.ndarray, epsilon: float) -> int:
        if random.random() < epsilon:
            return random.randrange(self.n_actions)
        return int(self.q_net(self._to_tensor(obs)).argmax(dim=-1).item())

    def learn(self, batch: Dict[str, torch.Tensor]) -> Dict[str, float]:
        obs, actions, rewards = batch["obs"], batch["actions"], batch["rewards"]
        next_obs, dones = batch["next_obs"], batch["dones"]
        with torch.no_grad():
            next_actions = self.q_net(next_obs).argmax(dim=-1, keepdim=True)
            next_q = self.target_net(next_obs).gather(1, next_actions).squeeze(-1)
            target = rewards + self.cfg.gamma * (1.0 - dones) * next_q
        q = self.q_net(obs).gather(1, actions.long().unsqueeze(-1)).squeeze(-1)
        loss = F.smooth_l1_loss(q, target)

        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.q_net.parameters(), self.cfg.max_grad_norm)
        self.optimizer.step()

        self.num_updates += 1
        if self.num_updates % self.cfg.target_update_interval == 0:
            self.target_net.load_state_dict(self.q_net.state_dict())
        return {"train/td_loss": loss.item(), "train/q_mean": q.mean().item()}

    @torch.no_grad()
    def evaluate(self, env: gym.Env) -> Dict[str, float]:
        self.q_net.eval()
        episode_returns = []
        q_total = 0.0
        n_steps = 0
        for ep in range(self.cfg.eval_episodes):
            obs, _ = env.reset(seed=self.cfg.eval_seed + ep)
            done, ep_return = False, 0.0
            while not done:
                q_values = self.q_net(self._to_tensor(obs))
                action = int(q_values.argmax(dim=-1).item())
                q_total += q_values.max(dim=-1).values.sum()
                n_steps += 1
                obs, reward, terminated, truncated, _ = env.step(action)
                ep_return += float(reward)
                done = terminated or truncated
            episode_returns.append(ep_return)
        self.q_net.train()
        mean_q = float(q_total / max(n_steps, 1))
        logger.info("eval: return=%.2f mean_q=%.3f over %d steps",
                    np.mean(episode_returns), mean_q, n_steps)
        return {
            "eval/return_mean": float(np.mean(episode_returns)),
            "eval/return_std": float(np.std(episode_returns)),
            "eval/q_mean": mean_q,
        }
