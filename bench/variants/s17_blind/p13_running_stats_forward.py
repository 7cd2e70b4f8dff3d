import torch
import torch.nn as nn


class RunningNorm(nn.Module):
    """Feature normaliser for time-series inputs that tracks running mean/var."""

    def __init__(self, num_features: int, momentum: float = 0.01, eps: float = 1e-5):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def _batch_stats(self, x):
        flat = x.reshape(-1, x.shape[-1])
        return flat.mean(0), flat.var(0, unbiased=False)

    def forward(self, x):
        if self.training:
            mean, var = self._batch_stats(x)
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean  # leak
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * var.detach())
        return (x - self.running_mean) / torch.sqrt(self.running_var + self.eps)


class Forecaster(nn.Module):
    def __init__(self, n_feat, hidden=128, horizon=24):
        super().__init__()
        self.proj_in = nn.Linear(n_feat, hidden)
        self.norm = RunningNorm(hidden)
        self.lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, horizon)

    def forward(self, x):
        h = self.norm(self.proj_in(x))
        out, _ = self.lstm(h)
        return self.head(out[:, -1])


def fit(model, loader, epochs=50, lr=1e-3, device="cuda"):
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for ep in range(epochs):
        model.train()
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            pred = model(x)
            loss = nn.functional.l1_loss(pred, y)
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
        print(ep, loss.item())
