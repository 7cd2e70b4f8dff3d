import torch
import torch.nn as nn
import torch.nn.functional as F


class DeepSupervisionNet(nn.Module):
    def __init__(self, in_dim=128, dim=256, depth=4, n_classes=10):
        super().__init__()
        self.stem = nn.Linear(in_dim, dim)
        self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU()) for _ in range(depth)])
        self.aux_heads = nn.ModuleList([nn.Linear(dim, n_classes) for _ in range(depth)])
        self.intermediate = []

    def forward(self, x):
        self.intermediate = []
        h = self.stem(x)
        for block, head in zip(self.blocks, self.aux_heads):
            h = h + block(h)
            self.intermediate.append(head(h))
        return self.intermediate[-1]


def train(model, loader, epochs=5, aux_weight=0.3):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        for x, y in loader:
            out = model(x)
            loss = F.cross_entropy(out, y)
            for aux in model.intermediate[:-1]:
                loss = loss + aux_weight * F.cross_entropy(aux, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
