from collections import deque

import torch
import torch.nn.functional as F
from torch import nn, Tensor


class FeatureMonitor:
    def __init__(self, module: nn.Module, window: int = 32):
        self.recent: deque[Tensor] = deque(maxlen=window)
        self.handle = module.register_forward_hook(self._hook)

    def _hook(self, module: nn.Module, inputs, output: Tensor) -> None:
        self.recent.append(output.detach().float().mean(dim=0))

    def drift(self) -> float:
        if len(self.recent) < 2:
            return 0.0
        stacked = torch.stack(list(self.recent))
        return (stacked[-1] - stacked[:-1].mean(0)).norm().item()

    def close(self) -> None:
        self.handle.remove()


def train(model: nn.Module, loader, optimizer: torch.optim.Optimizer, epochs: int,
          log_every: int = 100, device: str = "cuda") -> None:
    monitor = FeatureMonitor(model.backbone, window=64)
    step = 0
    for epoch in range(epochs):
        for images, labels in loader:
            loss = F.cross_entropy(model(images.to(device)), labels.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} drift {monitor.drift():.4f}")
    monitor.close()
