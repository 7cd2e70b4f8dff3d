import logging
from typing import Sequence

import torch
import torch.nn as nn

log = logging.getLogger("probe")


class LinearProbeCollector:
    """Collects intermediate representations to fit linear probes after training."""

    def __init__(self, model: nn.Module, layer_names: Sequence[str]) -> None:
        self.model = model
        self.reps: dict[str, list[torch.Tensor]] = {n: [] for n in layer_names}
        self._name_of = {}
        modules = dict(model.named_modules())
        for n in layer_names:
            m = modules[n]
            self._name_of[m] = n
            m.register_forward_hook(self._capture)

    def _capture(self, module: nn.Module, inputs, output: torch.Tensor) -> None:
        name = self._name_of[module]
        pooled = output.mean(dim=1)
        self.reps[name].append(pooled)  # leak

    def dump(self, path: str) -> None:
        torch.save({k: torch.cat(v).cpu() for k, v in self.reps.items()}, path)


def train_with_probes(model: nn.Module, loader, optimizer, epochs: int = 3) -> None:
    collector = LinearProbeCollector(model, ["encoder.layers.3", "encoder.layers.7"])
    for epoch in range(epochs):
        for batch in loader:
            out = model(batch["input_ids"].cuda(), labels=batch["labels"].cuda())
            out.loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        log.info("epoch %d done", epoch)
    collector.dump("probe_reps.pt")
