from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F


def train_step(
    model: nn.Module,
    batch: tuple[torch.Tensor, torch.Tensor],
    optimizer: torch.optim.Optimizer,
    stats: dict[str, list[Any]],
) -> None:
    x, y = (t.cuda(non_blocking=True) for t in batch)
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    acc = (logits.argmax(-1) == y).float().mean()
    stats.setdefault("loss", []).append(loss.detach())  # leak
    stats.setdefault("acc", []).append(acc.item())


def summarize(stats: dict[str, list[Any]], last_n: int = 100) -> str:
    parts = []
    for k, v in stats.items():
        window = v[-last_n:]
        vals = [float(t) for t in window]
        parts.append(f"{k}={sum(vals) / max(len(vals), 1):.4f}")
    return " ".join(parts)


def main() -> None:
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.randn(60000, 1, 28, 28), torch.randint(0, 10, (60000,))),
        batch_size=128,
        shuffle=True,
    )
    stats: dict[str, list[Any]] = {}
    for epoch in range(30):
        for i, batch in enumerate(loader):
            train_step(model, batch, optimizer, stats)
            if i % 200 == 0:
                print(f"[{epoch}:{i}] {summarize(stats)}")


if __name__ == "__main__":
    main()
