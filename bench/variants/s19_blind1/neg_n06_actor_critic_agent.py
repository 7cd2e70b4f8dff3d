"""Episodic advantage actor-critic agent.

Part of ``tinyrl.agents``.  The agent is environment-agnostic: the runner calls
``act`` for every environment step, ``observe`` with the reward, and
``finish_episode`` when the episode terminates.
"""
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

from tinyrl.nets import mlp


@dataclass
class EpisodeBuffer:
    log_probs: List = field(default_factory=list)
    values: List = field(default_factory=list)
    rewards: List[float] = field(default_factory=list)

    def clear(self):
        self.log_probs.clear()
        self.values.clear()
        self.rewards.clear()

    def __len__(self):
        return len(self.rewards)


class StatTracker:
    """Keeps a sliding window of per-step diagnostics (python floats)."""

    def __init__(self, window=1000):
        self._values = defaultdict(lambda: deque(maxlen=window))

    def record(self, **kwargs):
        for key, value in kwargs.items():
            if torch.is_tensor(value):
                value = value.detach().float().mean().item()
            self._values[key].append(value)

    def mean(self, key):
        vals = self._values.get(key)
        if not vals:
            return float("nan")
        return sum(vals) / len(vals)

    def summary(self):
        return {k: self.mean(k) for k in self._values}


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=128):
        super().__init__()
        self.body = mlp(obs_dim, [hidden, hidden], activation=nn.Tanh)
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


class A2CAgent:
    def __init__(self, obs_dim, n_actions, lr=7e-4, gamma=0.99, value_coef=0.5,
                 max_grad_norm=0.5, device="cpu"):
        self.device = torch.device(device)
        self.net = ActorCritic(obs_dim, n_actions).to(self.device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=lr)
        self.gamma = gamma
        self.value_coef = value_coef
        self.max_grad_norm = max_grad_norm
        self.buffer = EpisodeBuffer()
        self.stats = StatTracker()
        self.episodes = 0

    def act(self, obs):
        obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        dist, value = self.net(obs_t)
        action = dist.sample()
        self.buffer.log_probs.append(dist.log_prob(action))
        self.buffer.values.append(value)
        self.stats.record(entropy=dist.entropy(), value=value)
        return action.item()

    def observe(self, reward):
        self.buffer.rewards.append(float(reward))

    def _discounted_returns(self):
        ret, out = 0.0, []
        for r in reversed(self.buffer.rewards):
            ret = r + self.gamma * ret
            out.append(ret)
        out.reverse()
        returns = torch.tensor(out, device=self.device)
        if len(out) > 1:
            returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        return returns

    def finish_episode(self):
        if len(self.buffer) == 0:
            return {}
        returns = self._discounted_returns()
        log_probs = torch.stack(self.buffer.log_probs)
        values = torch.stack(self.buffer.values)
        advantages = returns - values.detach()

        policy_loss = -(log_probs * advantages).sum()
        value_loss = F.smooth_l1_loss(values, returns, reduction="sum")
        loss = policy_loss + self.value_coef * value_loss

        self.opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.net.parameters(), self.max_grad_norm)
        self.opt.step()

        ep_return = float(np.sum(self.buffer.rewards))
        ep_len = len(self.buffer)
        self.buffer.clear()
        self.episodes += 1
        info = {"return": ep_return, "length": ep_len, "loss": loss.item()}
        info.update(self.stats.summary())
        return info

    def save(self, path):
        torch.save({"net": self.net.state_dict(), "opt": self.opt.state_dict(),
                    "episodes": self.episodes}, path)
