import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class WindowDataset(Dataset):
    def __init__(self, series: np.ndarray, window: int = 96, horizon: int = 24):
        self.x = torch.tensor(series, dtype=torch.float32)
        self.window, self.horizon = window, horizon

    def __len__(self):
        return len(self.x) - self.window - self.horizon

    def __getitem__(self, i):
        w = self.x[i : i + self.window]
        t = self.x[i + self.window : i + self.window + self.horizon, 0]
        return w, t


class TCN(nn.Module):
    def __init__(self, n_in, ch=64, horizon=24):
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv1d(n_in, ch, 3, padding=2, dilation=2), nn.GELU(),
            nn.Conv1d(ch, ch, 3, padding=4, dilation=4), nn.GELU(),
        )
        self.head = nn.Linear(ch, horizon)

    def forward(self, x):
        h = self.convs(x.transpose(1, 2))
        return self.head(h[..., -1])


def validate(model, loader, device):
    model.eval()
    preds, targets = [], []
    with torch.no_grad():
        for x, y in loader:
            x = x.to(device)
            preds.append(model(x).cpu())
            targets.append(y)
    p = torch.cat(preds)
    t = torch.cat(targets)
    return {"mae": (p - t).abs().mean().item(), "mse": ((p - t) ** 2).mean().item()}


def main(csv_path="data/electricity.csv", epochs=20):
    df = pd.read_csv(csv_path, index_col=0)
    arr = ((df - df.mean()) / df.std()).values
    split = int(len(arr) * 0.8)
    tr = DataLoader(WindowDataset(arr[:split]), batch_size=64, shuffle=True, num_workers=4)
    va = DataLoader(WindowDataset(arr[split:]), batch_size=256)
    device = torch.device("cuda")
    model = TCN(arr.shape[1]).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for ep in range(epochs):
        model.train()
        for x, y in tr:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(ep, validate(model, va, device))


if __name__ == "__main__":
    main()
