"""PPO agent with a list-backed rollout buffer (vectorised gym envs)."""
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


@dataclass
class Transition:
    obs: torch.Tensor
    action: torch.Tensor
    logprob: torch.Tensor
    reward: torch.Tensor
    done: torch.Tensor
    value: torch.Tensor


class RolloutBuffer:
    def __init__(self, n_steps: int):
        self.n_steps = n_steps
        self.storage = []

    def add(self, obs, action, logprob, reward, done, value):
        self.storage.append(Transition(obs, action, logprob, reward, done, value))

    def clear(self):
        self.storage.clear()

    def latest(self):
        steps = self.storage[-self.n_steps:]
        return {f: torch.stack([getattr(t, f) for t in steps]) for f in Transition.__dataclass_fields__}


class PPOAgent:
    def __init__(self, policy: nn.Module, envs, n_steps=128, gamma=0.99, lam=0.95,
                 clip=0.2, epochs=4, lr=2.5e-4, device="cuda"):
        self.policy = policy.to(device)
        self.envs = envs
        self.device = device
        self.gamma, self.lam, self.clip, self.epochs = gamma, lam, clip, epochs
        self.buffer = RolloutBuffer(n_steps)
        self.n_steps = n_steps
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=lr, eps=1e-5)
        self.obs = torch.as_tensor(envs.reset()[0], dtype=torch.float32, device=device)

    @torch.no_grad()
    def collect(self):
        for _ in range(self.n_steps):
            logits, value = self.policy(self.obs)
            dist = Categorical(logits=logits)
            action = dist.sample()
            next_obs, reward, term, trunc, _ = self.envs.step(action.cpu().numpy())
            done = torch.as_tensor(np.logical_or(term, trunc), dtype=torch.float32, device=self.device)
            self.buffer.add(self.obs, action, dist.log_prob(action),
                            torch.as_tensor(reward, dtype=torch.float32, device=self.device), done, value.squeeze(-1))
            self.obs = torch.as_tensor(next_obs, dtype=torch.float32, device=self.device)

    def _gae(self, rewards, values, dones, last_value):
        adv = torch.zeros_like(rewards)
        gae = 0.0
        for t in reversed(range(self.n_steps)):
            next_v = last_value if t == self.n_steps - 1 else values[t + 1]
            delta = rewards[t] + self.gamma * next_v * (1 - dones[t]) - values[t]
            gae = delta + self.gamma * self.lam * (1 - dones[t]) * gae
            adv[t] = gae
        return adv, adv + values

    def update(self):
        batch = self.buffer.latest()
        with torch.no_grad():
            last_value = self.policy(self.obs)[1].squeeze(-1)
            adv, returns = self._gae(batch["reward"], batch["value"], batch["done"], last_value)
        obs = batch["obs"].flatten(0, 1)
        actions, old_lp = batch["action"].flatten(), batch["logprob"].flatten()
        adv, returns = adv.flatten(), returns.flatten()
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        for _ in range(self.epochs):
            logits, value = self.policy(obs)
            dist = Categorical(logits=logits)
            ratio = (dist.log_prob(actions) - old_lp).exp()
            pg = -torch.min(ratio * adv, ratio.clamp(1 - self.clip, 1 + self.clip) * adv).mean()
            v_loss = 0.5 * (value.squeeze(-1) - returns).pow(2).mean()
            loss = pg + 0.5 * v_loss - 0.01 * dist.entropy().mean()
            self.optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.policy.parameters(), 0.5)
            self.optimizer.step()
        self.buffer.clear()
        return loss.item()

    def train(self, total_updates: int):
        for it in range(total_updates):
            self.collect()
            loss = self.update()
            if it % 10 == 0:
                print(f"update {it} loss {loss:.3f}")
