"""Soft actor-critic data collection with crash-tolerant environments.

Some of our simulated robot envs raise on unstable physics (joint limits
blown, NaN state). The collector resets the env, records the failure and
keeps going so long training runs are not killed by a single bad episode.
"""
import logging
import traceback
from dataclasses import dataclass, field
from typing import Dict, List

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Normal

log = logging.getLogger("sac.collect")


class SimulationError(RuntimeError):
    """Raised by our env wrappers when the physics state becomes invalid."""


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=256, log_std_bounds=(-5.0, 2.0)):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, act_dim)
        self.log_std = nn.Linear(hidden, act_dim)
        self.lo, self.hi = log_std_bounds

    def forward(self, obs):
        h = self.trunk(obs)
        log_std = torch.tanh(self.log_std(h))
        log_std = self.lo + 0.5 * (self.hi - self.lo) * (log_std + 1)
        dist = Normal(self.mu(h), log_std.exp())
        u = dist.rsample()
        a = torch.tanh(u)
        logp = dist.log_prob(u).sum(-1) - torch.log(1 - a.pow(2) + 1e-6).sum(-1)
        return a, logp


class ReplayBuffer:
    def __init__(self, obs_dim, act_dim, capacity=1_000_000):
        self.obs = np.zeros((capacity, obs_dim), np.float32)
        self.act = np.zeros((capacity, act_dim), np.float32)
        self.rew = np.zeros((capacity,), np.float32)
        self.next_obs = np.zeros((capacity, obs_dim), np.float32)
        self.done = np.zeros((capacity,), np.float32)
        self.capacity, self.ptr, self.size = capacity, 0, 0

    def add(self, o, a, r, o2, d):
        i = self.ptr
        self.obs[i], self.act[i], self.rew[i], self.next_obs[i], self.done[i] = o, a, r, o2, d
        self.ptr = (self.ptr + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size, device):
        idx = np.random.randint(0, self.size, batch_size)
        f = lambda x: torch.as_tensor(x[idx], device=device)
        return f(self.obs), f(self.act), f(self.rew), f(self.next_obs), f(self.done)


@dataclass
class CollectorStats:
    episodes: int = 0
    steps: int = 0
    returns: List[float] = field(default_factory=list)
    failures: Dict[int, str] = field(default_factory=dict)


class Collector:
    def __init__(self, env, policy, buffer, device="cuda", max_episode_steps=1000):
        self.env = env
        self.policy = policy
        self.buffer = buffer
        self.device = device
        self.max_episode_steps = max_episode_steps
        self.stats = CollectorStats()
        self.obs, _ = env.reset()
        self.ep_return, self.ep_len = 0.0, 0

    def _policy_step(self, obs):
        obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device).unsqueeze(0)
        action, logp = self.policy(obs_t)
        next_obs, reward, term, trunc, info = self.env.step(action[0].detach().cpu().numpy())
        return action, next_obs, reward, term, trunc

    def collect(self, n_steps: int, random_actions: bool = False):
        for _ in range(n_steps):
            try:
                if random_actions:
                    a = self.env.action_space.sample()
                    next_obs, reward, term, trunc, _ = self.env.step(a)
                else:
                    action, next_obs, reward, term, trunc = self._policy_step(self.obs)
                    a = action[0].detach().cpu().numpy()
            except SimulationError as exc:
                self.stats.failures[self.stats.episodes] = "".join(traceback.format_exception_only(type(exc), exc))
                log.warning("episode %d crashed after %d steps: %s", self.stats.episodes, self.ep_len, exc)
                self._end_episode(record=False)
                continue
            self.buffer.add(self.obs, a, reward, next_obs, float(term))
            self.obs = next_obs
            self.ep_return += reward
            self.ep_len += 1
            self.stats.steps += 1
            if term or trunc or self.ep_len >= self.max_episode_steps:
                self._end_episode(record=True)

    def _end_episode(self, record: bool):
        if record:
            self.stats.returns.append(self.ep_return)
        self.stats.episodes += 1
        self.obs, _ = self.env.reset()
        self.ep_return, self.ep_len = 0.0, 0

    def summary(self, last=20):
        rets = self.stats.returns[-last:]
        return {"episodes": self.stats.episodes, "steps": self.stats.steps,
                "return_mean": float(np.mean(rets)) if rets else float("nan"),
                "crashes": len(self.stats.failures)}
