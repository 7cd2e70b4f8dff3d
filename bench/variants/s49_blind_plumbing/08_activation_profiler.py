import time
from collections import defaultdict

import torch
import torch.nn as nn


class ActivationProfiler:
    """Forward-hook profiler recording per-layer latency and activation scale."""

    def __init__(self, model: nn.Module, module_types=(nn.Linear, nn.Conv2d)):
        self.latency_ms = defaultdict(list)
        self.act_rms = defaultdict(list)
        self._start = {}
        self._handles = []
        for name, module in model.named_modules():
            if isinstance(module, module_types):
                self._handles.append(module.register_forward_pre_hook(self._pre_hook(name)))
                self._handles.append(module.register_forward_hook(self._post_hook(name)))

    def _pre_hook(self, name):
        def hook(module, inputs):
            self._start[name] = time.perf_counter()
        return hook

    def _post_hook(self, name):
        def hook(module, inputs, output):
            self.latency_ms[name].append((time.perf_counter() - self._start[name]) * 1e3)
            rms = output.flatten(1).pow(2).mean(dim=1).sqrt()
            self.act_rms[name].append(rms)  # leak
        return hook

    def report(self):
        for name, times in self.latency_ms.items():
            print(f"{name:40s} {sum(times) / len(times):8.3f} ms  rms={torch.cat(self.act_rms[name]).mean():.3f}")

    def close(self):
        for h in self._handles:
            h.remove()


def train_with_profiling(model, loader, optimizer, criterion, epochs=5, device="cuda"):
    profiler = ActivationProfiler(model)
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        profiler.report()
    profiler.close()
