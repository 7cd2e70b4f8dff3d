import torch
import torch.nn as nn
import torch.nn.functional as F


class MemoryBankNCE(nn.Module):
    """InfoNCE loss whose negatives come from a bank of per-instance embeddings."""

    def __init__(self, num_samples, dim=128, temperature=0.1, momentum=0.5, num_negatives=4096):
        super().__init__()
        self.temperature = temperature
        self.momentum = momentum
        self.num_negatives = num_negatives
        self.register_buffer("bank", F.normalize(torch.randn(num_samples, dim), dim=1))

    def forward(self, z1, z2, index):
        z1 = F.normalize(z1, dim=1)
        z2 = F.normalize(z2, dim=1)
        l_pos = (z1 * z2).sum(dim=1, keepdim=True)
        neg_idx = torch.randint(0, self.bank.size(0), (self.num_negatives,), device=z1.device)
        l_neg = z1 @ self.bank[neg_idx].t()
        logits = torch.cat([l_pos, l_neg], dim=1) / self.temperature
        labels = torch.zeros(z1.size(0), dtype=torch.long, device=z1.device)
        with torch.no_grad():
            updated = self.bank[index] * self.momentum + z2.detach() * (1 - self.momentum)
            self.bank.index_copy_(0, index, F.normalize(updated, dim=1))
        return F.cross_entropy(logits, labels)


class ProjectionHead(nn.Module):
    def __init__(self, in_dim=2048, hidden=2048, out_dim=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(inplace=True), nn.Linear(hidden, out_dim)
        )

    def forward(self, x):
        return self.net(x)


def pretrain(backbone, loader, num_samples, epochs=100, device="cuda"):
    head = ProjectionHead().to(device)
    criterion = MemoryBankNCE(num_samples).to(device)
    params = list(backbone.parameters()) + list(head.parameters())
    optimizer = torch.optim.SGD(params, lr=0.03, momentum=0.9, weight_decay=1e-4)
    for epoch in range(epochs):
        for (x1, x2), _, index in loader:
            x1, x2 = x1.to(device, non_blocking=True), x2.to(device, non_blocking=True)
            loss = criterion(head(backbone(x1)), head(backbone(x2)), index.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")
