"""REINFORCE with a learned baseline on CartPole; per-episode diagnostics are
collected and written to CSV at the end of the run."""
import argparse
import csv
from itertools import count

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


class Agent:
    def __init__(self, policy, lr=3e-3, gamma=0.99, ent_coef=0.01):
        self.policy = policy
        self.opt = torch.optim.Adam(policy.parameters(), lr=lr)
        self.gamma, self.ent_coef = gamma, ent_coef
        self.log_probs, self.values, self.rewards, self.entropies = [], [], [], []

    def act(self, obs):
        logits, value = self.policy(torch.as_tensor(obs, dtype=torch.float32))
        dist = Categorical(logits=logits)
        a = dist.sample()
        self.log_probs.append(dist.log_prob(a))
        self.values.append(value)
        self.entropies.append(dist.entropy())
        return a.item()

    def finish_episode(self):
        R, returns = 0.0, []
        for r in reversed(self.rewards):
            R = r + self.gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        values = torch.stack(self.values)
        adv = returns - values.detach()
        policy_loss = -(torch.stack(self.log_probs) * adv).sum()
        value_loss = F.smooth_l1_loss(values, returns)
        entropy = torch.stack(self.entropies).mean()
        loss = policy_loss + 0.5 * value_loss - self.ent_coef * entropy
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        info = {"ep_return": sum(self.rewards), "policy_loss": policy_loss.item(),
                "value_loss": value_loss.item(), "entropy": entropy.item()}
        self.log_probs, self.values, self.rewards, self.entropies = [], [], [], []
        return info


class EpisodeLog:
    def __init__(self, path):
        self.path = path
        self.rows = []

    def record(self, episode, info):
        self.rows.append({"episode": episode, **info})

    def running_return(self, window=100):
        return np.mean([r["ep_return"] for r in self.rows[-window:]])

    def write(self):
        with open(self.path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(self.rows[0].keys()))
            w.writeheader()
            w.writerows(self.rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=543)
    ap.add_argument("--csv", default="reinforce_log.csv")
    args = ap.parse_args()

    env = gym.make("CartPole-v1")
    torch.manual_seed(args.seed)
    agent = Agent(Policy(env.observation_space.shape[0], env.action_space.n))
    elog = EpisodeLog(args.csv)
    for ep in range(args.episodes):
        obs, _ = env.reset(seed=args.seed + ep)
        for t in count():
            obs, reward, terminated, truncated, _ = env.step(agent.act(obs))
            agent.rewards.append(reward)
            if terminated or truncated:
                break
        elog.record(ep, agent.finish_episode())
        if ep % 50 == 0:
            print(f"episode {ep}\tavg return {elog.running_return():.1f}")
        if elog.running_return() > env.spec.reward_threshold:
            print(f"solved at episode {ep}")
            break
    elog.write()


if __name__ == "__main__":
    main()
