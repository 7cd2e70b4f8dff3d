"""Synchronous advantage actor-critic for discrete-action gym environments."""
import argparse
import time

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


class A2CAgent:
    def __init__(self, env, gamma=0.99, lr=7e-4, n_steps=5, ent_coef=0.01, vf_coef=0.5, device="cpu"):
        self.env = env
        self.gamma = gamma
        self.n_steps = n_steps
        self.ent_coef = ent_coef
        self.vf_coef = vf_coef
        self.device = device
        obs_dim = env.single_observation_space.shape[0]
        self.net = ActorCritic(obs_dim, env.single_action_space.n).to(device)
        self.opt = torch.optim.RMSprop(self.net.parameters(), lr=lr, eps=1e-5, alpha=0.99)
        self.entropy_trace = []
        self.obs, _ = env.reset(seed=0)

    def act(self, obs):
        logits, value = self.net(torch.as_tensor(obs, dtype=torch.float32, device=self.device))
        dist = Categorical(logits=logits)
        action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), value

    def rollout(self):
        log_probs, values, rewards, masks, entropies = [], [], [], [], []
        for _ in range(self.n_steps):
            action, logp, ent, value = self.act(self.obs)
            self.obs, r, term, trunc, _ = self.env.step(action.cpu().numpy())
            done = np.logical_or(term, trunc)
            log_probs.append(logp)
            values.append(value)
            entropies.append(ent)
            rewards.append(torch.as_tensor(r, dtype=torch.float32, device=self.device))
            masks.append(torch.as_tensor(1.0 - done, dtype=torch.float32, device=self.device))
        with torch.no_grad():
            _, next_value = self.net(torch.as_tensor(self.obs, dtype=torch.float32, device=self.device))
        return log_probs, values, rewards, masks, entropies, next_value

    def compute_returns(self, rewards, masks, next_value):
        R = next_value
        returns = []
        for r, m in zip(reversed(rewards), reversed(masks)):
            R = r + self.gamma * R * m
            returns.insert(0, R)
        return returns

    def update(self):
        log_probs, values, rewards, masks, entropies, next_value = self.rollout()
        returns = torch.stack(self.compute_returns(rewards, masks, next_value))
        log_probs = torch.stack(log_probs)
        values = torch.stack(values)
        entropy = torch.stack(entropies).mean()
        adv = returns - values
        policy_loss = -(log_probs * adv.detach()).mean()
        value_loss = adv.pow(2).mean()
        loss = policy_loss + self.vf_coef * value_loss - self.ent_coef * entropy
        self.opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.net.parameters(), 0.5)
        self.opt.step()
        self.entropy_trace.append(entropy)  # leak
        return policy_loss.item(), value_loss.item()

    def recent_entropy(self, k=100):
        if not self.entropy_trace:
            return float("nan")
        return torch.stack(self.entropy_trace[-k:]).mean().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env", default="CartPole-v1")
    p.add_argument("--num-envs", type=int, default=16)
    p.add_argument("--total-updates", type=int, default=200_000)
    p.add_argument("--log-every", type=int, default=1000)
    args = p.parse_args()

    envs = gym.vector.SyncVectorEnv([lambda: gym.make(args.env) for _ in range(args.num_envs)])
    agent = A2CAgent(envs)
    t0 = time.time()
    for upd in range(1, args.total_updates + 1):
        pl, vl = agent.update()
        if upd % args.log_every == 0:
            print(f"upd {upd:7d} pi {pl:+.3f} v {vl:.3f} H {agent.recent_entropy():.3f} "
                  f"fps {upd * agent.n_steps * args.num_envs / (time.time() - t0):.0f}")


if __name__ == "__main__":
    main()
