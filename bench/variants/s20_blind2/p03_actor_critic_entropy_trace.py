"""Episodic actor-critic (REINFORCE with baseline) for discrete-action gym tasks.

    python p03_actor_critic_entropy_trace.py --env CartPole-v1 --episodes 5000
"""
import argparse
import logging
from collections import namedtuple
from itertools import count

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

try:
    import gymnasium as gym
except ImportError:  # pragma: no cover
    import gym

log = logging.getLogger("ac")
SavedAction = namedtuple("SavedAction", ["log_prob", "value"])


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(),
                                  nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.body(x)
        return self.pi(h), self.v(h).squeeze(-1)


class Agent:
    def __init__(self, obs_dim, n_actions, lr=3e-3, gamma=0.99, ent_coef=0.01,
                 device="cpu", stats_window=100):
        self.device = torch.device(device)
        self.net = ActorCritic(obs_dim, n_actions).to(self.device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr)
        self.gamma = gamma
        self.ent_coef = ent_coef
        self.stats_window = stats_window
        self.eps = np.finfo(np.float32).eps.item()

        # per-episode buffers
        self.saved_actions = []
        self.rewards = []
        self.entropies = []
        # diagnostics
        self.entropy_trace = []

    def select_action(self, obs):
        obs = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        logits, value = self.net(obs)
        dist = Categorical(logits=logits)
        action = dist.sample()
        ent = dist.entropy()
        self.saved_actions.append(SavedAction(dist.log_prob(action), value))
        self.entropies.append(ent)
        self.entropy_trace.append(ent)  # leak
        return action.item()

    def _discounted_returns(self):
        R = 0.0
        returns = []
        for r in reversed(self.rewards):
            R = r + self.gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns, device=self.device)
        return (returns - returns.mean()) / (returns.std() + self.eps)

    def finish_episode(self):
        returns = self._discounted_returns()
        policy_losses, value_losses = [], []
        for (log_prob, value), R in zip(self.saved_actions, returns):
            advantage = R - value.item()
            policy_losses.append(-log_prob * advantage)
            value_losses.append(F.smooth_l1_loss(value, R))
        entropy = torch.stack(self.entropies).mean()

        self.optimizer.zero_grad()
        loss = (torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
                - self.ent_coef * entropy)
        loss.backward()
        nn.utils.clip_grad_norm_(self.net.parameters(), 0.5)
        self.optimizer.step()

        del self.rewards[:]
        del self.saved_actions[:]
        del self.entropies[:]
        return loss.item()

    def recent_entropy(self):
        if not self.entropy_trace:
            return float("nan")
        window = self.entropy_trace[-self.stats_window:]
        return torch.stack(window).mean().item()


def parse_args():
    p = argparse.ArgumentParser(description="actor-critic")
    p.add_argument("--env", default="CartPole-v1")
    p.add_argument("--episodes", type=int, default=5000)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--seed", type=int, default=543)
    p.add_argument("--log-interval", type=int, default=10)
    p.add_argument("--cuda", action="store_true")
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    env = gym.make(args.env)
    torch.manual_seed(args.seed)

    agent = Agent(env.observation_space.shape[0], env.action_space.n, gamma=args.gamma,
                  device="cuda" if args.cuda else "cpu")
    running_reward = 10.0
    for i_episode in range(1, args.episodes + 1):
        state, _ = env.reset(seed=args.seed + i_episode)
        ep_reward = 0.0
        for t in count(1):
            action = agent.select_action(state)
            state, reward, terminated, truncated, _ = env.step(action)
            agent.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break

        running_reward = 0.05 * ep_reward + 0.95 * running_reward
        loss = agent.finish_episode()
        if i_episode % args.log_interval == 0:
            log.info("episode %d  last %.1f  avg %.2f  loss %.3f  entropy %.3f",
                     i_episode, ep_reward, running_reward, loss, agent.recent_entropy())
        if running_reward > env.spec.reward_threshold:
            log.info("solved at episode %d (running reward %.1f)", i_episode, running_reward)
            break


if __name__ == "__main__":
    main()
