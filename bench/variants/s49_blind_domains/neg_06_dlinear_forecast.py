import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class MovingAvg(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size
        self.avg = nn.AvgPool1d(kernel_size=kernel_size, stride=1)

    def forward(self, x):
        pad = (self.kernel_size - 1) // 2
        front = x[:, :1, :].repeat(1, pad, 1)
        end = x[:, -1:, :].repeat(1, self.kernel_size - 1 - pad, 1)
        x = torch.cat([front, x, end], dim=1)
        return self.avg(x.permute(0, 2, 1)).permute(0, 2, 1)


class DLinear(nn.Module):
    """Decomposition-linear forecaster: trend + seasonal linear heads."""

    def __init__(self, seq_len, pred_len, kernel_size=25):
        super().__init__()
        self.decomp = MovingAvg(kernel_size)
        self.linear_seasonal = nn.Linear(seq_len, pred_len)
        self.linear_trend = nn.Linear(seq_len, pred_len)

    def forward(self, x):
        trend = self.decomp(x)
        seasonal = x - trend
        out = self.linear_seasonal(seasonal.transpose(1, 2)) + self.linear_trend(trend.transpose(1, 2))
        return out.transpose(1, 2)


@torch.no_grad()
def forecast(model, loader: DataLoader, device):
    model.eval()
    preds = torch.empty(0)
    trues = []
    for batch_x, batch_y in loader:
        batch_x = batch_x.float().to(device)
        out = model(batch_x)
        preds = torch.cat([preds, out.cpu()])
        trues.append(batch_y.numpy())
    return preds, np.concatenate(trues)


def test(model, test_set, device, batch_size=32):
    loader = DataLoader(test_set, batch_size=batch_size, shuffle=False, drop_last=False)
    preds, trues = forecast(model, loader, device)
    preds = preds.numpy()
    mae = np.mean(np.abs(preds - trues))
    mse = np.mean((preds - trues) ** 2)
    print(f"test mse={mse:.4f} mae={mae:.4f}")
    return mse, mae
