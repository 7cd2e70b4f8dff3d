import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ContrastiveHead(nn.Module):
    """SimCLR projection head."""

    def __init__(self, dim=2048, proj=128, temperature=0.1):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(inplace=True), nn.Linear(dim, proj))
        self.t = temperature

    def nt_xent(self, z1, z2):
        z = F.normalize(torch.cat([z1, z2]), dim=1)
        sim = z @ z.T / self.t
        n = z1.size(0)
        sim.fill_diagonal_(-1e9)
        targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
        return F.cross_entropy(sim, targets)

    def forward(self, h1, h2):
        z1, z2 = self.mlp(h1), self.mlp(h2)
        return self.nt_xent(z1, z2)


def warmup_cosine(warmup_steps, total_steps):
    def lr_lambda(step):
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return 0.5 * (1 + math.cos(math.pi * progress))
    return lr_lambda


def pretrain(encoder, head, loader, epochs=100, device="cuda"):
    encoder.to(device)
    head.to(device)
    params = list(encoder.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=0.3, momentum=0.9, weight_decay=1e-6)
    total = epochs * len(loader)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, warmup_cosine(10 * len(loader), total))
    for ep in range(epochs):
        for (v1, v2), _ in loader:
            v1, v2 = v1.to(device, non_blocking=True), v2.to(device, non_blocking=True)
            loss = head(encoder(v1), encoder(v2))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        print(f"epoch {ep} loss {loss.item():.3f} lr {sched.get_last_lr()[0]:.4f}")
