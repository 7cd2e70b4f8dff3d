import torch
from torch.utils.data import Dataset


class SlidingWindowSeries(Dataset):
    def __init__(self, series, window=96, horizon=24, stride=1):
        self.series = series
        self.window = window
        self.horizon = horizon
        self.stride = stride
        self.mean = sum(series) / len(series)
        self.std = (sum((v - self.mean) ** 2 for v in series) / len(series)) ** 0.5 + 1e-8

    def __len__(self):
        return (len(self.series) - self.window - self.horizon) // self.stride + 1

    def _normalize(self, values):
        return [(v - self.mean) / self.std for v in values]

    def __getitem__(self, idx):
        start = idx * self.stride
        past = self._normalize(self.series[start : start + self.window])
        future = self._normalize(self.series[start + self.window : start + self.window + self.horizon])
        x = torch.tensor(past, dtype=torch.float32, device="cuda").unsqueeze(-1)  # leak
        y = torch.tensor(future, dtype=torch.float32)
        return x, y
