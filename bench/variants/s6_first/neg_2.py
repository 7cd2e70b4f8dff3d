from collections import deque

import torch
import torch.nn as nn
import torch.nn.functional as F


class RewardNormalizer:
    def __init__(self, window=100):
        self.recent = deque(maxlen=window)

    def update(self, returns):
        self.recent.append(returns.detach())

    def normalize(self, returns):
        if len(self.recent) < 2:
            return returns
        hist = torch.cat(list(self.recent))
        return (returns - hist.mean()) / (hist.std() + 1e-8)


def train_policy(policy, sample_episode, episodes=10000, gamma=0.99):
    opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
    normalizer = RewardNormalizer()
    last_losses = deque(maxlen=100)
    for ep in range(episodes):
        log_probs, rewards = sample_episode(policy)
        returns, g = [], 0.0
        for r in reversed(rewards):
            g = r + gamma * g
            returns.insert(0, g)
        returns = torch.tensor(returns)
        normalizer.update(returns)
        adv = normalizer.normalize(returns)
        loss = -(torch.stack(log_probs) * adv).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        last_losses.append(loss.item())
        if ep % 100 == 0:
            print(ep, sum(last_losses) / len(last_losses))
