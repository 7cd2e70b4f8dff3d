import json

import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class LossHistory:
    """Running per-epoch average of the training loss, with a JSON dump."""

    def __init__(self):
        self.epochs = []
        self._running = 0.0
        self._count = 0

    def update(self, loss, n=1):
        self._running += loss.item() * n
        self._count += n

    def end_epoch(self):
        avg = float(self._running / max(self._count, 1))
        self.epochs.append(avg)
        self._running = 0.0
        self._count = 0
        return avg

    def save(self, path):
        with open(path, "w") as f:
            json.dump({"train_loss": self.epochs}, f, indent=2)


def train(model: nn.Module, loader: DataLoader, epochs=50, lr=1e-3, device="cuda"):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    history = LossHistory()
    model.to(device)
    for epoch in range(epochs):
        model.train()
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            loss = criterion(outputs, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            history.update(loss, inputs.size(0))
        print(f"[{epoch + 1}/{epochs}] train loss: {history.end_epoch():.4f}")
    history.save("loss_history.json")
    return history
