import torch
import torch.nn as nn
import torch.nn.functional as F


class EpisodicMemory(nn.Module):
    def __init__(self, key_dim=64, value_dim=64):
        super().__init__()
        self.key_proj = nn.Linear(value_dim, key_dim)
        self.read_proj = nn.Linear(value_dim, value_dim)
        self.memo = {}

    def write(self, h):
        self.memo[len(self.memo)] = h  # leak

    def read(self, query):
        if not self.memo:
            return torch.zeros_like(query)
        values = torch.stack([v.detach() for v in list(self.memo.values())[-32:]], dim=1)
        keys = self.key_proj(values)
        scores = torch.einsum("bd,bnd->bn", self.key_proj(query), keys) / keys.size(-1) ** 0.5
        return torch.einsum("bn,bnd->bd", scores.softmax(-1), values)

    def forward(self, h):
        out = h + self.read_proj(self.read(h))
        self.write(out)
        return out


class MemoryAugmentedNet(nn.Module):
    def __init__(self, in_dim=32, dim=64, out_dim=4):
        super().__init__()
        self.inp = nn.Linear(in_dim, dim)
        self.memory = EpisodicMemory(dim, dim)
        self.out = nn.Linear(dim, out_dim)

    def forward(self, x):
        return self.out(self.memory(torch.tanh(self.inp(x))))


def train(model, loader, epochs=5):
    opt = torch.optim.RMSprop(model.parameters(), lr=5e-4)
    for _ in range(epochs):
        for x, y in loader:
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
