import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader


class AverageMeter:
    def __init__(self, name: str, fmt: str = ":.4f"):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self) -> None:
        self.sum = 0.0
        self.count = 0
        self.values: list[float] = []

    def update(self, value: Tensor, n: int = 1) -> None:
        v = value.item()
        self.values.append(v)
        self.sum += v * n
        self.count += n

    @property
    def avg(self) -> float:
        return self.sum / max(self.count, 1)

    def __str__(self) -> str:
        return ("{name} {avg" + self.fmt + "}").format(name=self.name, avg=self.avg)


def train_epoch(model: nn.Module, loader: DataLoader, optimizer: torch.optim.Optimizer,
                losses: AverageMeter, log_every: int = 50, device: str = "cuda") -> float:
    model.train()
    losses.reset()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss, x.size(0))
        if step % log_every == 0:
            print(f"step {step}: {losses}")
    return losses.avg
