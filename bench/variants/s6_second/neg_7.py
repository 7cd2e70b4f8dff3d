import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader


def repackage_hidden(h):
    if isinstance(h, Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


class StatefulForecaster(nn.Module):
    def __init__(self, n_features: int, hidden_size: int = 256, num_layers: int = 2, horizon: int = 24):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden_size, num_layers, batch_first=True)
        self.head = nn.Linear(hidden_size, horizon)

    def forward(self, x: Tensor, state=None):
        out, state = self.lstm(x, state)
        return self.head(out[:, -1]), state


def train(model: StatefulForecaster, loader: DataLoader, optimizer: torch.optim.Optimizer,
          epochs: int, device: str = "cuda") -> None:
    for epoch in range(epochs):
        model.train()
        state = None
        total = 0.0
        for i, (x, y) in enumerate(loader):
            x, y = x.to(device), y.to(device)
            if state is not None:
                state = repackage_hidden(state)
            pred, state = model(x, state)
            loss = F.huber_loss(pred, y)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            total += loss.item()
        print(f"epoch {epoch}: {total / (i + 1):.4f}")
