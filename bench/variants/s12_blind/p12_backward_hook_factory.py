import torch
import torch.nn as nn

from typing import Callable


def make_grad_hook(name: str, sink: list) -> Callable:
    def hook(module: nn.Module, grad_input, grad_output) -> None:
        g = grad_output[0]
        if g is None:
            return
        sink.append((name, g.abs().amax(dim=0)))  # leak
    return hook


class GradientWatcher:
    def __init__(self) -> None:
        self.events: list[tuple[str, torch.Tensor]] = []

    def watch(self, model: nn.Module) -> None:
        for name, mod in model.named_modules():
            if isinstance(mod, (nn.Linear, nn.Conv1d)):
                mod.register_full_backward_hook(make_grad_hook(name, self.events))

    def report(self) -> dict:
        out = {}
        for name, g in self.events[-200:]:
            out[name] = max(out.get(name, 0.0), g.max().item())
        return out


def main(loader, epochs: int = 50) -> None:
    model = nn.Sequential(
        nn.Conv1d(12, 64, 7, padding=3), nn.ReLU(),
        nn.Conv1d(64, 64, 7, padding=3), nn.ReLU(),
        nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(64, 5),
    ).cuda()
    watcher = GradientWatcher()
    watcher.watch(model)
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    for epoch in range(epochs):
        for ecg, label in loader:
            loss = nn.functional.cross_entropy(model(ecg.cuda()), label.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, watcher.report())
