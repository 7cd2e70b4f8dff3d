"""Uniform experience replay backed by pre-allocated numpy arrays."""
import numpy as np
import torch


class ReplayBuffer:
    """Circular buffer; memory footprint is fixed at construction time."""

    def __init__(self, capacity: int, obs_dim: int, seed: int = 0):
        self.capacity = capacity
        self.obs = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.next_obs = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.dones = np.zeros(capacity, dtype=np.float32)
        self.idx = 0
        self.full = False
        self.rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        return self.capacity if self.full else self.idx

    def add(self, obs, action, reward, next_obs, done) -> None:
        self.obs[self.idx] = obs
        self.actions[self.idx] = action
        self.rewards[self.idx] = reward
        self.next_obs[self.idx] = next_obs
        self.dones[self.idx] = done
        self.idx = (self.idx + 1) % self.capacity
        self.full = self.full or self.idx == 0

    def sample(self, batch_size: int):
        ids = self.rng.integers(0, len(self), size=batch_size)
        return (
            torch.from_numpy(self.obs[ids]),
            torch.from_numpy(self.actions[ids]),
            torch.from_numpy(self.rewards[ids]),
            torch.from_numpy(self.next_obs[ids]),
            torch.from_numpy(self.dones[ids]),
        )
