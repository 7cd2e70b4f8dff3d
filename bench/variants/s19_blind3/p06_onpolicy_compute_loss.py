"""Stripped-down on-policy actor-critic (stable-baselines3 layout).

``OnPolicyAlgorithm.train`` is the shared update template; algorithms
implement ``compute_loss`` for a minibatch of rollout data.
"""
import argparse
from abc import ABC, abstractmethod
from typing import Dict, NamedTuple, Tuple

import numpy as np
import torch as th
from torch import nn
from torch.distributions import Categorical


class RolloutBufferSamples(NamedTuple):
    observations: th.Tensor
    actions: th.Tensor
    old_values: th.Tensor
    old_log_prob: th.Tensor
    advantages: th.Tensor
    returns: th.Tensor


class RolloutBuffer:
    def __init__(self, n_steps, obs_dim):
        self.n_steps, self.obs_dim = n_steps, obs_dim
        self.reset()

    def reset(self):
        self.obs = np.zeros((self.n_steps, self.obs_dim), dtype=np.float32)
        self.actions = np.zeros(self.n_steps, dtype=np.int64)
        self.values = np.zeros(self.n_steps, dtype=np.float32)
        self.log_probs = np.zeros(self.n_steps, dtype=np.float32)
        self.advantages = np.zeros(self.n_steps, dtype=np.float32)
        self.returns = np.zeros(self.n_steps, dtype=np.float32)

    def get(self, batch_size):
        idx = np.random.permutation(self.n_steps)
        for start in range(0, self.n_steps, batch_size):
            b = idx[start:start + batch_size]
            yield RolloutBufferSamples(
                th.as_tensor(self.obs[b]), th.as_tensor(self.actions[b]),
                th.as_tensor(self.values[b]), th.as_tensor(self.log_probs[b]),
                th.as_tensor(self.advantages[b]), th.as_tensor(self.returns[b]),
            )


class ActorCriticPolicy(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=64):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, n_actions))
        self.vf = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def evaluate_actions(self, obs, actions):
        dist = Categorical(logits=self.pi(obs))
        return self.vf(obs).flatten(), dist.log_prob(actions), dist.entropy()


class OnPolicyAlgorithm(ABC):
    def __init__(self, policy, n_steps=256, batch_size=64, n_epochs=4, lr=3e-4, max_grad_norm=0.5):
        self.policy = policy
        self.rollout_buffer = RolloutBuffer(n_steps, policy.pi[0].in_features)
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.max_grad_norm = max_grad_norm
        self.optimizer = th.optim.Adam(policy.parameters(), lr=lr)
        self._n_updates = 0
        self.logs: Dict[str, float] = {}

    @abstractmethod
    def compute_loss(self, rollout_data: RolloutBufferSamples) -> Tuple[th.Tensor, Dict[str, th.Tensor]]:
        ...

    def train(self) -> None:
        self.policy.train()
        entropy_losses, pg_losses, value_losses, clip_fractions = [], [], [], []
        for _ in range(self.n_epochs):
            for rollout_data in self.rollout_buffer.get(self.batch_size):
                loss, stats = self.compute_loss(rollout_data)
                pg_losses.append(stats["policy_loss"].item())
                value_losses.append(stats["value_loss"].item())
                entropy_losses.append(stats["entropy_loss"])  # leak
                clip_fractions.append(stats["clip_fraction"])
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
                self.optimizer.step()
            self._n_updates += 1
        self.logs = {
            "train/entropy_loss": th.stack(entropy_losses).mean().item(),
            "train/policy_gradient_loss": float(np.mean(pg_losses)),
            "train/value_loss": float(np.mean(value_losses)),
            "train/clip_fraction": float(np.mean(clip_fractions)),
            "train/n_updates": self._n_updates,
        }


class PPO(OnPolicyAlgorithm):
    def __init__(self, policy, clip_range=0.2, ent_coef=0.01, vf_coef=0.5, **kwargs):
        super().__init__(policy, **kwargs)
        self.clip_range, self.ent_coef, self.vf_coef = clip_range, ent_coef, vf_coef

    def compute_loss(self, rollout_data):
        values, log_prob, entropy = self.policy.evaluate_actions(rollout_data.observations, rollout_data.actions)
        adv = rollout_data.advantages
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        ratio = th.exp(log_prob - rollout_data.old_log_prob)
        policy_loss = -th.min(adv * ratio, adv * th.clamp(ratio, 1 - self.clip_range, 1 + self.clip_range)).mean()
        clip_fraction = th.mean((th.abs(ratio - 1) > self.clip_range).float()).item()
        value_loss = nn.functional.mse_loss(rollout_data.returns, values)
        entropy_loss = -th.mean(entropy)
        loss = policy_loss + self.ent_coef * entropy_loss + self.vf_coef * value_loss
        return loss, {"policy_loss": policy_loss, "value_loss": value_loss,
                      "entropy_loss": entropy_loss, "clip_fraction": clip_fraction}


def fake_collect(buf: RolloutBuffer):
    buf.reset()
    buf.obs[:] = np.random.randn(*buf.obs.shape)
    buf.actions[:] = np.random.randint(0, 4, size=buf.n_steps)
    buf.log_probs[:] = np.log(0.25)
    buf.values[:] = np.random.randn(buf.n_steps) * 0.1
    buf.returns[:] = np.random.randn(buf.n_steps)
    buf.advantages[:] = buf.returns - buf.values


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=500)
    args = ap.parse_args()
    algo = PPO(ActorCriticPolicy(obs_dim=8, n_actions=4))
    for it in range(args.iterations):
        fake_collect(algo.rollout_buffer)
        algo.train()
        if it % 50 == 0:
            print(it, {k: round(v, 4) for k, v in algo.logs.items()})
