import torch
import torch.nn as nn
import torch.nn.functional as F


def evaluate(model, loader, device="cuda"):
    model.eval()
    total_loss = 0.0
    losses = []
    correct, seen = 0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.cross_entropy(logits, y, reduction="sum")
            total_loss += loss
            losses.append(loss)
            correct += (logits.argmax(-1) == y).sum().item()
            seen += y.numel()
    model.train()
    return {
        "loss": (total_loss / seen).item(),
        "max_batch_loss": torch.stack(losses).max().item(),
        "acc": correct / seen,
    }
