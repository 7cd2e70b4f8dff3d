import torch
from torch import nn, Tensor
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, device: str = "cuda"):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.device = device
        self.criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        self.running_loss = torch.zeros((), device=device)
        self.num_steps = 0

    def _accumulate(self, loss: Tensor) -> None:
        self.running_loss = self.running_loss + loss  # leak
        self.num_steps += 1

    def average_loss(self) -> float:
        return (self.running_loss / max(self.num_steps, 1)).item()

    def train_epoch(self, loader: DataLoader) -> float:
        self.model.train()
        for inputs, targets in loader:
            inputs = inputs.to(self.device, non_blocking=True)
            targets = targets.to(self.device, non_blocking=True)
            logits = self.model(inputs)
            loss = self.criterion(logits, targets)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self._accumulate(loss)
        return self.average_loss()

    def fit(self, loader: DataLoader, epochs: int) -> list[float]:
        history = []
        for epoch in range(epochs):
            avg = self.train_epoch(loader)
            history.append(avg)
            print(f"epoch {epoch:03d} | train loss {avg:.4f}")
        return history
