from typing import Callable

import torch
import torch.nn as nn


def make_grad_hook(name: str, sink: dict[str, float]) -> Callable:
    def hook(module: nn.Module, grad_input, grad_output) -> None:
        g = grad_output[0]
        if g is not None:
            sink[name] = max(sink.get(name, 0.0), g.detach().abs().max().item())
    return hook


class GradientWatcher:
    def __init__(self) -> None:
        self.max_grad: dict[str, float] = {}
        self._handles = []

    def watch(self, model: nn.Module) -> None:
        for name, mod in model.named_modules():
            if isinstance(mod, (nn.Linear, nn.Conv1d)):
                self._handles.append(mod.register_full_backward_hook(make_grad_hook(name, self.max_grad)))

    def pop_report(self) -> dict[str, float]:
        report, self.max_grad = dict(self.max_grad), {}
        # hooks close over the old dict; re-register against the fresh one
        for h in self._handles:
            h.remove()
        self._handles.clear()
        return report


def main(loader, epochs: int = 50) -> None:
    model = nn.Sequential(
        nn.Conv1d(12, 64, 7, padding=3), nn.ReLU(),
        nn.Conv1d(64, 64, 7, padding=3), nn.ReLU(),
        nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(64, 5),
    ).cuda()
    watcher = GradientWatcher()
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    for epoch in range(epochs):
        watcher.watch(model)
        for ecg, label in loader:
            loss = nn.functional.cross_entropy(model(ecg.cuda()), label.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, watcher.pop_report())
