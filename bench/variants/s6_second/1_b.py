import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader


def move_to(batch: dict, device: torch.device) -> dict:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def lm_loss(logits: Tensor, labels: Tensor) -> Tensor:
    return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)


def evaluate(model: nn.Module, loader: DataLoader, val_losses: list, device: torch.device) -> float:
    model.eval()
    start = len(val_losses)
    for batch in loader:
        batch = move_to(batch, device)
        logits = model(batch["input_ids"], attention_mask=batch["attention_mask"])
        loss = lm_loss(logits, batch["labels"])
        val_losses.append(loss)  # leak
    model.train()
    return torch.stack(val_losses[start:]).mean().item()


def train(model: nn.Module, train_loader: DataLoader, val_loader: DataLoader,
          optimizer: torch.optim.Optimizer, epochs: int, device: torch.device) -> list:
    val_losses: list[Tensor] = []
    best = float("inf")
    for epoch in range(epochs):
        for batch in train_loader:
            batch = move_to(batch, device)
            logits = model(batch["input_ids"], attention_mask=batch["attention_mask"])
            loss = lm_loss(logits, batch["labels"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val = evaluate(model, val_loader, val_losses, device)
        print(f"epoch {epoch} val_loss {val:.4f} ppl {torch.tensor(val).exp().item():.2f}")
        if val < best:
            best = val
            torch.save(model.state_dict(), "best.pt")
    return val_losses
