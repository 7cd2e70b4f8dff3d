import logging
from typing import Sequence

import torch
import torch.nn as nn

log = logging.getLogger("probe")


class SparsityTracker:
    """Tracks the fraction of dead ReLU units per layer (python floats only)."""

    def __init__(self, model: nn.Module, layer_names: Sequence[str]) -> None:
        self.dead_frac: dict[str, float] = {n: 0.0 for n in layer_names}
        self.calls: dict[str, int] = {n: 0 for n in layer_names}
        self._name_of = {}
        self._handles = []
        modules = dict(model.named_modules())
        for n in layer_names:
            self._name_of[modules[n]] = n
            self._handles.append(modules[n].register_forward_hook(self._capture))

    def _capture(self, module: nn.Module, inputs, output: torch.Tensor) -> None:
        name = self._name_of[module]
        frac = (output.detach() <= 0).float().mean().item()
        self.dead_frac[name] += frac
        self.calls[name] += 1

    def report(self) -> dict[str, float]:
        return {n: self.dead_frac[n] / max(self.calls[n], 1) for n in self.dead_frac}

    def remove(self) -> None:
        for h in self._handles:
            h.remove()


def train(model: nn.Module, loader, optimizer, epochs: int = 3) -> None:
    tracker = SparsityTracker(model, ["features.1", "features.4", "classifier.1"])
    for epoch in range(epochs):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        log.info("epoch %d dead units: %s", epoch, tracker.report())
    tracker.remove()
