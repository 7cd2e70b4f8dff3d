import torch
import torch.nn as nn
import torch.nn.functional as F


class ContrastiveHead(nn.Module):
    """SimCLR projection head; defers expensive embedding diagnostics."""

    def __init__(self, dim=2048, proj=128, temperature=0.1):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(inplace=True), nn.Linear(dim, proj))
        self.t = temperature
        self.diagnostics = []

    def nt_xent(self, z1, z2):
        z = F.normalize(torch.cat([z1, z2]), dim=1)
        sim = z @ z.T / self.t
        n = z1.size(0)
        sim.fill_diagonal_(-1e9)
        targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
        return F.cross_entropy(sim, targets)

    def forward(self, h1, h2):
        z1, z2 = self.mlp(h1), self.mlp(h2)

        def uniformity():  # leak
            z = F.normalize(z1, dim=1)
            return torch.pdist(z).pow(2).mul(-2).exp().mean().log().item()

        self.diagnostics.append(uniformity)
        return self.nt_xent(z1, z2)


def pretrain(encoder, head, loader, epochs=100, device="cuda"):
    encoder.to(device)
    head.to(device)
    params = list(encoder.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=0.3, momentum=0.9, weight_decay=1e-6)
    for ep in range(epochs):
        for (v1, v2), _ in loader:
            v1, v2 = v1.to(device, non_blocking=True), v2.to(device, non_blocking=True)
            loss = head(encoder(v1), encoder(v2))
            opt.zero_grad()
            loss.backward()
            opt.step()
        if head.diagnostics:
            print(f"epoch {ep} loss {loss.item():.3f} uniformity {head.diagnostics[-1]():.3f}")
