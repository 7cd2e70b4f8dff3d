"""Sliding-window datasets over multivariate hourly series."""
import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch.utils.data import Dataset

logger = logging.getLogger(__name__)


@dataclass
class StandardScaler:
    mean: np.ndarray = None
    std: np.ndarray = None

    def fit(self, x: np.ndarray) -> "StandardScaler":
        self.mean = x.mean(axis=0)
        self.std = x.std(axis=0) + 1e-6
        return self

    def transform(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.std

    def inverse_transform_target(self, y: torch.Tensor, target_idx: int) -> torch.Tensor:
        return y * float(self.std[target_idx]) + float(self.mean[target_idx])


def calendar_features(index: pd.DatetimeIndex) -> np.ndarray:
    hour = index.hour.to_numpy() / 23.0 - 0.5
    dow = index.dayofweek.to_numpy() / 6.0 - 0.5
    doy = (index.dayofyear.to_numpy() - 1) / 365.0 - 0.5
    return np.stack([hour, dow, doy], axis=1).astype(np.float32)


class WindowDataset(Dataset):
    """Returns (past covariates, future known covariates, future target)."""

    def __init__(self, values: np.ndarray, calendar: np.ndarray, target_idx: int,
                 lookback: int = 168, horizon: int = 24, stride: int = 1):
        self.values = values.astype(np.float32)
        self.calendar = calendar
        self.target_idx = target_idx
        self.lookback = lookback
        self.horizon = horizon
        self.starts = np.arange(0, len(values) - lookback - horizon + 1, stride)

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, i):
        s = self.starts[i]
        e = s + self.lookback
        past = np.concatenate([self.values[s:e], self.calendar[s:e]], axis=1)
        future_cal = self.calendar[e:e + self.horizon]
        target = self.values[e:e + self.horizon, self.target_idx]
        return torch.from_numpy(past), torch.from_numpy(future_cal), torch.from_numpy(target)


def load_splits(csv_path: str, target: str, lookback: int, horizon: int, val_days: int = 60):
    df = pd.read_csv(csv_path, parse_dates=["timestamp"], index_col="timestamp").asfreq("h")
    df = df.interpolate(limit=6).ffill().bfill()
    target_idx = df.columns.get_loc(target)
    cal = calendar_features(df.index)
    split = len(df) - val_days * 24
    scaler = StandardScaler().fit(df.values[:split])
    values = scaler.transform(df.values)
    train = WindowDataset(values[:split], cal[:split], target_idx, lookback, horizon)
    val = WindowDataset(values[split - lookback:], cal[split - lookback:], target_idx,
                        lookback, horizon, stride=horizon)
    logger.info("train windows=%d val windows=%d features=%d", len(train), len(val), df.shape[1])
    return train, val, scaler, target_idx, df.shape[1] + cal.shape[1]
