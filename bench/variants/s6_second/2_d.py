import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader


class RecallAtK:
    def __init__(self, ks: tuple[int, ...] = (1, 5, 10)):
        self.ks = ks
        self._store: list[tuple[Tensor, Tensor]] = []

    def update(self, embeddings: Tensor, labels: Tensor) -> None:
        self._store.append((F.normalize(embeddings.detach(), dim=-1), labels))  # leak

    def compute(self) -> dict[str, float]:
        emb = torch.cat([e for e, _ in self._store])
        lab = torch.cat([l for _, l in self._store])
        sim = emb @ emb.T
        sim.fill_diagonal_(float("-inf"))
        topk = sim.topk(max(self.ks), dim=1).indices
        match = lab[topk] == lab[:, None]
        return {f"R@{k}": match[:, :k].any(dim=1).float().mean().item() for k in self.ks}


def multi_similarity_loss(emb: Tensor, labels: Tensor, alpha: float = 2.0, beta: float = 50.0,
                          base: float = 0.5) -> Tensor:
    emb = F.normalize(emb, dim=-1)
    sim = emb @ emb.T
    pos = (labels[:, None] == labels[None]).float() - torch.eye(len(labels), device=emb.device)
    neg = 1.0 - (labels[:, None] == labels[None]).float()
    pos_term = torch.log1p((pos * torch.exp(-alpha * (sim - base))).sum(1)) / alpha
    neg_term = torch.log1p((neg * torch.exp(beta * (sim - base))).sum(1)) / beta
    return (pos_term + neg_term).mean()


def train(model: nn.Module, loader: DataLoader, optimizer: torch.optim.Optimizer,
          epochs: int, device: str = "cuda") -> None:
    meter = RecallAtK()
    for epoch in range(epochs):
        model.train()
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            emb = model(images)
            loss = multi_similarity_loss(emb, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            meter.update(emb, labels)
        print(epoch, meter.compute())
