import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 2 * dim)
        self.callbacks = []

    def forward(self, x):
        a, b = self.fc(self.norm(x)).chunk(2, dim=-1)
        h = a * torch.sigmoid(b)
        self.callbacks.append(lambda: h.pow(2).mean().sqrt().item())  # leak
        return x + h

    def gate_rms(self):
        return self.callbacks[-1]() if self.callbacks else float("nan")


class GatedMLP(nn.Module):
    def __init__(self, in_dim=64, dim=256, depth=6, out_dim=10):
        super().__init__()
        self.stem = nn.Linear(in_dim, dim)
        self.blocks = nn.ModuleList([GatedResidualBlock(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, out_dim)

    def forward(self, x):
        x = self.stem(x)
        for blk in self.blocks:
            x = blk(x)
        return self.head(x)


def train(model, loader, epochs=10):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, [round(b.gate_rms(), 4) for b in model.blocks])
