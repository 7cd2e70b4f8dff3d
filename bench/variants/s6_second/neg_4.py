import torch
import torch.nn.functional as F
from torch import nn, Tensor


class NegativeQueue(nn.Module):
    def __init__(self, dim: int, size: int = 16384):
        super().__init__()
        self.size = size
        self.register_buffer("queue", F.normalize(torch.randn(size, dim), dim=1))

    @torch.no_grad()
    def push(self, keys: Tensor) -> None:
        self.queue = torch.cat([self.queue, keys.detach()], dim=0)[-self.size:]


class ContrastiveModel(nn.Module):
    def __init__(self, encoder: nn.Module, key_encoder: nn.Module, dim: int = 128, temperature: float = 0.2):
        super().__init__()
        self.encoder = encoder
        self.key_encoder = key_encoder.requires_grad_(False)
        self.bank = NegativeQueue(dim)
        self.temperature = temperature

    def forward(self, x_q: Tensor, x_k: Tensor) -> Tensor:
        q = F.normalize(self.encoder(x_q), dim=1)
        with torch.no_grad():
            k = F.normalize(self.key_encoder(x_k), dim=1)
        pos = (q * k).sum(1, keepdim=True)
        neg = q @ self.bank.queue.T
        logits = torch.cat([pos, neg], dim=1) / self.temperature
        self.bank.push(k)
        return F.cross_entropy(logits, torch.zeros(len(q), dtype=torch.long, device=q.device))


def train(model: ContrastiveModel, loader, optimizer: torch.optim.Optimizer, epochs: int) -> None:
    for epoch in range(epochs):
        for (x_q, x_k), _ in loader:
            loss = model(x_q.cuda(), x_k.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: {loss.item():.4f}")
