import torch
import torch.nn as nn
import torch.nn.functional as F


class MemoryBankNCE(nn.Module):
    """InfoNCE loss whose negatives come from a bank of past embeddings."""

    def __init__(self, temperature=0.1, num_negatives=4096):
        super().__init__()
        self.temperature = temperature
        self.num_negatives = num_negatives
        self.bank = []

    def forward(self, z1, z2):
        z1 = F.normalize(z1, dim=1)
        z2 = F.normalize(z2, dim=1)
        l_pos = (z1 * z2).sum(dim=1, keepdim=True)
        if self.bank:
            negatives = torch.stack(self.bank[-self.num_negatives:])
            l_neg = z1 @ negatives.t()
        else:
            l_neg = z1 @ z2.t()
        logits = torch.cat([l_pos, l_neg], dim=1) / self.temperature
        labels = torch.zeros(z1.size(0), dtype=torch.long, device=z1.device)
        self.bank.extend(z2.detach().clone().unbind(0))  # leak
        return F.cross_entropy(logits, labels)


class ProjectionHead(nn.Module):
    def __init__(self, in_dim=2048, hidden=2048, out_dim=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(inplace=True), nn.Linear(hidden, out_dim)
        )

    def forward(self, x):
        return self.net(x)


def pretrain(backbone, loader, epochs=100, device="cuda"):
    head = ProjectionHead().to(device)
    criterion = MemoryBankNCE().to(device)
    params = list(backbone.parameters()) + list(head.parameters())
    optimizer = torch.optim.SGD(params, lr=0.03, momentum=0.9, weight_decay=1e-4)
    for epoch in range(epochs):
        for (x1, x2), _ in loader:
            x1, x2 = x1.to(device, non_blocking=True), x2.to(device, non_blocking=True)
            loss = criterion(head(backbone(x1)), head(backbone(x2)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")
