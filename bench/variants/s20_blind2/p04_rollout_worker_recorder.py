"""Rollout collection for on-policy training (PPO) on vectorised envs.

The worker owns a fixed-size ``RolloutStorage`` that the learner consumes every
``num_steps`` and an optional ``TrajectoryRecorder`` that can export the raw
transitions (used to build BC datasets from strong checkpoints).
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


@dataclass
class WorkerConfig:
    num_envs: int = 16
    num_steps: int = 128
    gamma: float = 0.99
    gae_lambda: float = 0.95
    export_dir: Optional[str] = None
    export_every: int = 50
    device: str = "cuda"


class RolloutStorage:
    def __init__(self, num_steps: int, num_envs: int, obs_shape, device):
        self.obs = torch.zeros((num_steps, num_envs) + tuple(obs_shape), device=device)
        self.actions = torch.zeros(num_steps, num_envs, dtype=torch.long, device=device)
        self.logprobs = torch.zeros(num_steps, num_envs, device=device)
        self.rewards = torch.zeros(num_steps, num_envs, device=device)
        self.dones = torch.zeros(num_steps, num_envs, device=device)
        self.values = torch.zeros(num_steps, num_envs, device=device)
        self.advantages = torch.zeros(num_steps, num_envs, device=device)
        self.returns = torch.zeros(num_steps, num_envs, device=device)

    def insert(self, step: int, obs, action, logprob, reward, done, value):
        self.obs[step].copy_(obs)
        self.actions[step].copy_(action)
        self.logprobs[step].copy_(logprob)
        self.rewards[step].copy_(reward)
        self.dones[step].copy_(done)
        self.values[step].copy_(value)

    @torch.no_grad()
    def compute_gae(self, next_value, next_done, gamma, lam):
        lastgaelam = 0
        T = self.rewards.size(0)
        for t in reversed(range(T)):
            if t == T - 1:
                nextnonterminal, nextvalues = 1.0 - next_done, next_value
            else:
                nextnonterminal, nextvalues = 1.0 - self.dones[t + 1], self.values[t + 1]
            delta = self.rewards[t] + gamma * nextvalues * nextnonterminal - self.values[t]
            lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
            self.advantages[t] = lastgaelam
        self.returns.copy_(self.advantages + self.values)


@dataclass
class TrajectoryRecorder:
    """Keeps transitions until they are written out with :meth:`dump`."""
    transitions: List[Dict[str, torch.Tensor]] = field(default_factory=list)

    def add(self, **step):
        self.transitions.append(step)  # leak

    def dump(self, path: str) -> int:
        n = len(self.transitions)
        batch = {k: torch.stack([t[k].cpu() for t in self.transitions])
                 for k in self.transitions[0]}
        torch.save(batch, path)
        self.transitions.clear()
        return n


class RolloutWorker:
    def __init__(self, envs, policy: nn.Module, cfg: WorkerConfig):
        self.envs = envs
        self.policy = policy
        self.cfg = cfg
        self.device = torch.device(cfg.device)
        obs_shape = envs.single_observation_space.shape
        self.storage = RolloutStorage(cfg.num_steps, cfg.num_envs, obs_shape, self.device)
        self.recorder = TrajectoryRecorder()
        obs, _ = envs.reset()
        self.next_obs = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        self.next_done = torch.zeros(cfg.num_envs, device=self.device)
        self.iteration = 0

    def _steps(self) -> Iterator[Dict[str, torch.Tensor]]:
        for step in range(self.cfg.num_steps):
            obs, done = self.next_obs, self.next_done
            with torch.no_grad():
                action, logprob, _, value = self.policy.get_action_and_value(obs)
            raw_obs, reward, term, trunc, info = self.envs.step(action.cpu().numpy())
            self.next_obs = torch.as_tensor(raw_obs, dtype=torch.float32, device=self.device)
            self.next_done = torch.as_tensor(term | trunc, dtype=torch.float32, device=self.device)
            yield dict(step=step, obs=obs, action=action, logprob=logprob,
                       reward=torch.as_tensor(reward, dtype=torch.float32, device=self.device),
                       done=done, value=value.flatten())

    def collect(self) -> RolloutStorage:
        for out in self._steps():
            step = out.pop("step")
            self.storage.insert(step, **out)
            self.recorder.add(obs=out["obs"], action=out["action"], reward=out["reward"],
                              done=out["done"])

        with torch.no_grad():
            next_value = self.policy.get_value(self.next_obs).flatten()
        self.storage.compute_gae(next_value, self.next_done, self.cfg.gamma, self.cfg.gae_lambda)

        self.iteration += 1
        if self.cfg.export_dir and self.iteration % self.cfg.export_every == 0:
            path = os.path.join(self.cfg.export_dir, f"traj_{self.iteration:06d}.pt")
            n = self.recorder.dump(path)
            logger.info("exported %d transitions to %s", n, path)
        return self.storage
