import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader, Subset


class HardExampleMiner:
    def __init__(self, keep_ratio: float = 0.3):
        self.keep_ratio = keep_ratio
        self.scores: dict[int, float] = {}

    def update(self, indices: Tensor, per_sample_loss: Tensor) -> None:
        order = sorted(range(len(indices)), key=lambda i: per_sample_loss[i].item(), reverse=True)
        for i in order:
            self.scores[int(indices[i])] = per_sample_loss[i].item()

    def hardest(self) -> list[int]:
        ranked = sorted(self.scores, key=lambda idx: self.scores[idx], reverse=True)
        return ranked[: int(len(ranked) * self.keep_ratio)]


def train_epoch(model: nn.Module, loader: DataLoader, optimizer: torch.optim.Optimizer,
                miner: HardExampleMiner, device: str = "cuda") -> None:
    model.train()
    for images, labels, indices in loader:
        images, labels = images.to(device), labels.to(device)
        losses = F.cross_entropy(model(images), labels, reduction="none")
        optimizer.zero_grad()
        losses.mean().backward()
        optimizer.step()
        miner.update(indices, losses.detach())


def fit(model: nn.Module, dataset, optimizer: torch.optim.Optimizer, epochs: int, batch_size: int = 128) -> None:
    miner = HardExampleMiner()
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=4)
    for epoch in range(epochs):
        train_epoch(model, loader, optimizer, miner)
        hard = Subset(dataset, miner.hardest())
        loader = DataLoader(hard if epoch % 2 == 0 else dataset, batch_size=batch_size, shuffle=True, num_workers=4)
