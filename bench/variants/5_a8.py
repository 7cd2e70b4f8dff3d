import torch
import torch.nn as nn


class VQ(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(16, 4)
        self.usage = []

    def forward(self, z):
        d = torch.cdist(z, self.embed.weight)
        idx = d.argmin(-1)
        self.usage.append(idx)  # leak
        return self.embed(idx)
