import torch
import torch.nn as nn


class MemoryBank(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.register_buffer("memory", torch.zeros(0, dim))

    def forward(self, x):
        feats = self.fc(x)
        self.memory = torch.cat([self.memory, feats.detach()], dim=0)  # leak
        return feats @ self.memory.t()
