"""Transformer forecaster for hourly load data (Lightning).

The encoder keeps its attention weights so that they can be plotted
afterwards in ``notebooks/attention_heatmaps.ipynb``.
"""
from argparse import ArgumentParser
import math

import numpy as np
import pandas as pd
import pytorch_lightning as pl
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class WindowDataset(Dataset):
    def __init__(self, series: np.ndarray, lookback: int, horizon: int):
        self.x = series.astype(np.float32)
        self.lookback = lookback
        self.horizon = horizon

    def __len__(self):
        return len(self.x) - self.lookback - self.horizon + 1

    def __getitem__(self, i):
        past = self.x[i:i + self.lookback]
        fut = self.x[i + self.lookback:i + self.lookback + self.horizon, 0]
        return torch.from_numpy(past), torch.from_numpy(fut)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=2048):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class AttnEncoderLayer(nn.Module):
    """Post-norm encoder layer that also records its attention map."""

    def __init__(self, d_model, n_heads, dropout=0.1):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.attention_maps = []

    def forward(self, x):
        h, weights = self.attn(x, x, x, need_weights=True, average_attn_weights=True)
        self.attention_maps.append(weights)  # leak
        x = self.norm1(x + self.drop(h))
        return self.norm2(x + self.drop(self.ff(x)))


class LoadForecaster(pl.LightningModule):
    def __init__(self, n_features, horizon=24, d_model=64, n_heads=4, n_layers=3, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.inp = nn.Linear(n_features, d_model)
        self.pos = PositionalEncoding(d_model)
        self.layers = nn.ModuleList([AttnEncoderLayer(d_model, n_heads) for _ in range(n_layers)])
        self.head = nn.Linear(d_model, horizon)

    def forward(self, x):
        z = self.pos(self.inp(x))
        for layer in self.layers:
            z = layer(z)
        return self.head(z[:, -1])

    def _shared_step(self, batch, stage):
        x, y = batch
        yhat = self(x)
        loss = nn.functional.mse_loss(yhat, y)
        mae = (yhat - y).abs().mean()
        self.log(f"{stage}_loss", loss, prog_bar=True)
        self.log(f"{stage}_mae", mae)
        return loss

    def training_step(self, batch, batch_idx):
        return self._shared_step(batch, "train")

    def validation_step(self, batch, batch_idx):
        self._shared_step(batch, "val")

    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=3)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "monitor": "val_loss"}}


def load_frame(path):
    df = pd.read_csv(path, parse_dates=["timestamp"]).set_index("timestamp")
    df["hour"] = df.index.hour / 23.0
    df["dow"] = df.index.dayofweek / 6.0
    values = df[["load_mw", "temp_c", "hour", "dow"]].values
    mu, sd = values.mean(0), values.std(0) + 1e-6
    return (values - mu) / sd


if __name__ == "__main__":
    parser = ArgumentParser()
    parser.add_argument("--csv", default="data/load_hourly.csv")
    parser.add_argument("--lookback", type=int, default=168)
    parser.add_argument("--horizon", type=int, default=24)
    parser.add_argument("--max_epochs", type=int, default=50)
    args = parser.parse_args()

    arr = load_frame(args.csv)
    split = int(0.8 * len(arr))
    train_ds = WindowDataset(arr[:split], args.lookback, args.horizon)
    val_ds = WindowDataset(arr[split - args.lookback:], args.lookback, args.horizon)

    model = LoadForecaster(n_features=arr.shape[1], horizon=args.horizon)
    trainer = pl.Trainer(max_epochs=args.max_epochs, accelerator="auto", gradient_clip_val=1.0)
    trainer.fit(model,
                DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=2),
                DataLoader(val_ds, batch_size=128, num_workers=2))

    maps = [torch.stack([m.mean(0) for m in layer.attention_maps[-10:]]).detach().cpu().numpy()
            for layer in model.layers]
    np.save("attention_maps.npy", np.stack(maps))
