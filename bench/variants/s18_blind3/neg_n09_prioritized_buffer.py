"""Prioritized experience replay with proportional sampling (Schaul et al. 2016)."""
import numpy as np
import torch

from .segment_tree import SumSegmentTree, MinSegmentTree


class PrioritizedReplayBuffer:
    def __init__(self, capacity, obs_shape, device="cpu", alpha=0.6, eps=1e-6):
        it_cap = 1
        while it_cap < capacity:
            it_cap *= 2
        self.capacity = capacity
        self.alpha = alpha
        self.eps = eps
        self.device = device
        self.obs = torch.zeros((capacity, *obs_shape), dtype=torch.uint8)
        self.next_obs = torch.zeros((capacity, *obs_shape), dtype=torch.uint8)
        self.actions = torch.zeros(capacity, dtype=torch.long)
        self.rewards = torch.zeros(capacity, dtype=torch.float32)
        self.dones = torch.zeros(capacity, dtype=torch.bool)
        self._sum = SumSegmentTree(it_cap)
        self._min = MinSegmentTree(it_cap)
        self._max_priority = 1.0
        self._ptr = 0
        self._size = 0
        self._td_mean = 0.0
        self._td_max = 0.0

    def __len__(self):
        return self._size

    def add(self, obs, action, reward, next_obs, done):
        i = self._ptr
        self.obs[i] = torch.as_tensor(obs)
        self.next_obs[i] = torch.as_tensor(next_obs)
        self.actions[i] = int(action)
        self.rewards[i] = float(reward)
        self.dones[i] = bool(done)
        self._sum[i] = self._max_priority ** self.alpha
        self._min[i] = self._max_priority ** self.alpha
        self._ptr = (i + 1) % self.capacity
        self._size = min(self._size + 1, self.capacity)

    def _sample_proportional(self, batch_size):
        total = self._sum.sum(0, self._size - 1)
        mass = (np.random.random(batch_size) + np.arange(batch_size)) * (total / batch_size)
        return np.array([self._sum.find_prefixsum_idx(m) for m in mass], dtype=np.int64)

    def sample(self, batch_size, beta=0.4):
        idx = self._sample_proportional(batch_size)
        total = self._sum.sum()
        p_min = self._min.min() / total
        max_w = (p_min * self._size) ** (-beta)
        p = np.array([self._sum[i] for i in idx]) / total
        weights = torch.as_tensor((p * self._size) ** (-beta) / max_w, dtype=torch.float32)
        t = torch.as_tensor(idx)
        batch = (self.obs[t], self.actions[t], self.rewards[t], self.next_obs[t], self.dones[t])
        return tuple(b.to(self.device) for b in batch) + (weights.to(self.device), idx)

    def update_priorities(self, idx, td_errors):
        prios = td_errors.detach().abs().cpu().numpy() + self.eps
        self._td_mean = 0.99 * self._td_mean + 0.01 * float(prios.mean())
        self._td_max = float(prios.max())
        for i, p in zip(idx, prios):
            self._sum[i] = p ** self.alpha
            self._min[i] = p ** self.alpha
            self._max_priority = max(self._max_priority, float(p))

    def td_stats(self):
        return {"td_mean": self._td_mean, "td_max": self._td_max}
