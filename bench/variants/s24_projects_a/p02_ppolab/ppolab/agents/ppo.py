"""Proximal Policy Optimisation with clipped surrogate objective."""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

from .base import BaseAgent


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class ActorCritic(nn.Module):
    def __init__(self, obs_dim: int, n_actions: int, hidden: int = 64):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, n_actions), std=0.01),
        )

    def value(self, obs):
        return self.critic(obs).squeeze(-1)

    def dist(self, obs):
        return Categorical(logits=self.actor(obs))


class PPOAgent(BaseAgent):
    def __init__(self, obs_dim, n_actions, lr=2.5e-4, clip=0.2, epochs=4,
                 minibatch_size=256, vf_coef=0.5, ent_coef=0.01, max_grad_norm=0.5,
                 device="cpu"):
        super().__init__(device)
        self.net = self.register("net", ActorCritic(obs_dim, n_actions))
        self.opt = torch.optim.Adam(self.net.parameters(), lr=lr, eps=1e-5)
        self.clip = clip
        self.epochs = epochs
        self.minibatch_size = minibatch_size
        self.vf_coef = vf_coef
        self.ent_coef = ent_coef
        self.max_grad_norm = max_grad_norm

    @torch.no_grad()
    def act(self, obs: np.ndarray):
        obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        dist = self.net.dist(obs_t)
        action = dist.sample()
        return action.cpu().numpy(), dist.log_prob(action), self.net.value(obs_t)

    def update(self, rollout) -> None:
        batch = rollout.flatten()
        n = batch["obs"].shape[0]
        idx = np.arange(n)
        for _ in range(self.epochs):
            np.random.shuffle(idx)
            for start in range(0, n, self.minibatch_size):
                mb = idx[start:start + self.minibatch_size]
                obs, actions = batch["obs"][mb], batch["actions"][mb]
                old_logp, adv, ret = batch["logprobs"][mb], batch["advantages"][mb], batch["returns"][mb]

                dist = self.net.dist(obs)
                logp = dist.log_prob(actions)
                ratio = (logp - old_logp).exp()
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)

                pg_loss1 = -adv * ratio
                pg_loss2 = -adv * torch.clamp(ratio, 1 - self.clip, 1 + self.clip)
                policy_loss = torch.max(pg_loss1, pg_loss2).mean()
                value_loss = 0.5 * (self.net.value(obs) - ret).pow(2).mean()
                entropy = dist.entropy().mean()
                loss = policy_loss + self.vf_coef * value_loss - self.ent_coef * entropy

                self.opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), self.max_grad_norm)
                self.opt.step()

                with torch.no_grad():
                    approx_kl = ((ratio - 1) - (logp - old_logp)).mean().item()
                self.record(policy_loss=policy_loss, value_loss=value_loss,
                            entropy=entropy, approx_kl=approx_kl)
        self.num_updates += 1
