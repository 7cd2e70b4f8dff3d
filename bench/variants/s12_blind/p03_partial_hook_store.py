from collections import defaultdict
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


def save_activation(store: dict, name: str, module: nn.Module, inputs, output: torch.Tensor) -> None:
    # detach so we don't keep the graph around
    store[name].append(output.detach())  # leak


class ActivationMonitor:
    def __init__(self, model: nn.Module, layer_types=(nn.Conv2d, nn.Linear)) -> None:
        self.model = model
        self.activations: dict[str, list[torch.Tensor]] = defaultdict(list)
        self.handles = []
        for name, mod in model.named_modules():
            if isinstance(mod, layer_types):
                h = mod.register_forward_hook(partial(save_activation, self.activations, name))
                self.handles.append(h)

    def summary(self) -> dict[str, float]:
        return {k: torch.stack([a.float().std() for a in v]).mean().item() for k, v in self.activations.items()}


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc = nn.Linear(64 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def main(loader, epochs: int = 20) -> None:
    model = SmallCNN().cuda()
    monitor = ActivationMonitor(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, monitor.summary())
