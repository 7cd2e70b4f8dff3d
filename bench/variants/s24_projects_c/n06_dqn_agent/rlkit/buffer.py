"""Uniform experience replay with a fixed capacity."""
import random
from collections import deque
from typing import NamedTuple

import numpy as np
import torch


class Batch(NamedTuple):
    obs: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    next_obs: torch.Tensor
    done: torch.Tensor


class ReplayBuffer:
    """Stores transitions as numpy arrays; the deque drops the oldest at capacity."""

    def __init__(self, capacity: int, seed: int = 0):
        self.capacity = capacity
        self.storage = deque(maxlen=capacity)
        self.rng = random.Random(seed)

    def __len__(self) -> int:
        return len(self.storage)

    def add(self, obs, action: int, reward: float, next_obs, done: bool) -> None:
        self.storage.append((np.asarray(obs, dtype=np.float32), int(action), float(reward),
                             np.asarray(next_obs, dtype=np.float32), bool(done)))

    def sample(self, batch_size: int, device) -> Batch:
        items = self.rng.sample(self.storage, batch_size)
        obs, act, rew, nxt, done = zip(*items)
        return Batch(
            obs=torch.as_tensor(np.stack(obs), device=device),
            action=torch.as_tensor(act, dtype=torch.long, device=device),
            reward=torch.as_tensor(rew, dtype=torch.float32, device=device),
            next_obs=torch.as_tensor(np.stack(nxt), device=device),
            done=torch.as_tensor(done, dtype=torch.float32, device=device),
        )


class NStepAccumulator:
    """Folds the last n rewards into one transition before it enters the buffer."""

    def __init__(self, n: int, gamma: float):
        self.n, self.gamma = n, gamma
        self.window = deque(maxlen=n)

    def push(self, obs, action, reward, next_obs, done):
        self.window.append((obs, action, reward, next_obs, done))
        if len(self.window) < self.n and not done:
            return None
        ret = sum(r * self.gamma ** i for i, (_, _, r, _, _) in enumerate(self.window))
        first = self.window[0]
        out = (first[0], first[1], ret, next_obs, done)
        if done:
            self.window.clear()
        return out
