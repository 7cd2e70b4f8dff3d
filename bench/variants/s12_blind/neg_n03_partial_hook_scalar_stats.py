from collections import defaultdict
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


def record_stats(stats: dict, name: str, module: nn.Module, inputs, output: torch.Tensor) -> None:
    # Only python scalars are kept: running sums, no tensors.
    with torch.no_grad():
        s = stats[name]
        s["mean"] += output.mean().item()
        s["absmax"] = max(s["absmax"], output.abs().max().item())
        s["count"] += 1


class ActivationMonitor:
    def __init__(self, model: nn.Module) -> None:
        self.stats: dict[str, dict[str, float]] = defaultdict(lambda: {"mean": 0.0, "absmax": 0.0, "count": 0})
        self.handles = [
            mod.register_forward_hook(partial(record_stats, self.stats, name))
            for name, mod in model.named_modules()
            if isinstance(mod, (nn.Conv2d, nn.Linear))
        ]

    def summary(self) -> dict[str, float]:
        return {k: v["mean"] / max(v["count"], 1) for k, v in self.stats.items()}

    def close(self) -> None:
        for h in self.handles:
            h.remove()


def main(model: nn.Module, loader, epochs: int = 20) -> None:
    model = model.cuda()
    monitor = ActivationMonitor(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    try:
        for epoch in range(epochs):
            for x, y in loader:
                loss = F.cross_entropy(model(x.cuda()), y.cuda())
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(epoch, monitor.summary())
    finally:
        monitor.close()
