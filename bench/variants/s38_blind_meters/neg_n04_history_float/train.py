from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Dict

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

from history import History


@dataclass
class Config:
    in_features: int = 64
    hidden: int = 256
    num_classes: int = 5
    epochs: int = 50
    batch_size: int = 256
    lr: float = 3e-4
    weight_decay: float = 1e-2
    log_every: int = 200


class MLP(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(cfg.in_features, cfg.hidden), nn.GELU(), nn.LayerNorm(cfg.hidden),
            nn.Linear(cfg.hidden, cfg.hidden), nn.GELU(), nn.LayerNorm(cfg.hidden),
            nn.Linear(cfg.hidden, cfg.num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def train_step(model: nn.Module, batch, optimizer: torch.optim.Optimizer,
               device: torch.device) -> Dict[str, object]:
    x, y = (t.to(device, non_blocking=True) for t in batch)
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    acc = (logits.argmax(dim=1) == y).float().mean().item()
    return {"loss": loss, "acc": acc}


@torch.no_grad()
def evaluate(model: nn.Module, loader: DataLoader, device: torch.device) -> float:
    model.eval()
    correct, total = 0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        correct += (model(x).argmax(dim=1) == y).sum().item()
        total += y.numel()
    model.train()
    return correct / max(total, 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=Config.epochs)
    parser.add_argument("--out", type=str, default="history.json")
    args = parser.parse_args()
    cfg = Config(epochs=args.epochs)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    data = TensorDataset(torch.randn(60_000, cfg.in_features),
                         torch.randint(0, cfg.num_classes, (60_000,)))
    train_set, val_set = random_split(data, [50_000, 10_000])
    train_loader = DataLoader(train_set, batch_size=cfg.batch_size, shuffle=True, num_workers=4)
    val_loader = DataLoader(val_set, batch_size=1024)

    model = MLP(cfg).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    history = History()

    step = 0
    for epoch in range(cfg.epochs):
        for batch in train_loader:
            stats = train_step(model, batch, optimizer, device)
            history.record(step, **stats)
            step += 1
            if step % cfg.log_every == 0:
                print(f"epoch {epoch} step {step} {history.summary(cfg.log_every)}")
        val_acc = evaluate(model, val_loader, device)
        print(f"epoch {epoch} val_acc={val_acc:.4f}")

    history.save(args.out)
    history.plot("curves.png", keys=["loss", "acc"])


if __name__ == "__main__":
    main()
