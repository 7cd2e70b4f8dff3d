import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader


class AccumulatingTrainer:
    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, accum_steps: int = 8,
                 max_norm: float = 1.0):
        self.model = model
        self.optimizer = optimizer
        self.accum_steps = accum_steps
        self.max_norm = max_norm
        self.accum_loss = 0.0

    def _loss(self, batch: dict[str, Tensor]) -> Tensor:
        logits = self.model(batch["input_ids"].cuda(), attention_mask=batch["attention_mask"].cuda())
        return F.cross_entropy(logits, batch["labels"].cuda())

    def step(self, batch: dict[str, Tensor], step: int) -> float | None:
        loss = self._loss(batch)
        self.accum_loss = self.accum_loss + loss / self.accum_steps
        if (step + 1) % self.accum_steps != 0:
            return None
        self.accum_loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        value = self.accum_loss.item()
        self.accum_loss = 0.0
        return value

    def fit(self, loader: DataLoader, epochs: int) -> list[float]:
        history = []
        self.model.train()
        for _ in range(epochs):
            for step, batch in enumerate(loader):
                value = self.step(batch, step)
                if value is not None:
                    history.append(value)
        return history
