import torch
import torch.nn as nn


class Rotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self._cache = {}

    def forward(self, x):
        seq_len = x.shape[1]
        if seq_len not in self._cache:
            t = torch.arange(seq_len, device=x.device)
            freqs = torch.outer(t, torch.ones(self.dim, device=x.device))
            self._cache[seq_len] = freqs.cos()  # leak
        return x * self._cache[seq_len]
