"""Encoder-decoder LSTM with quantile outputs."""
from typing import Sequence

import torch
import torch.nn as nn


class Seq2SeqForecaster(nn.Module):
    def __init__(self, n_features: int, n_known: int = 3, hidden: int = 128, layers: int = 2,
                 quantiles: Sequence[float] = (0.1, 0.5, 0.9), dropout: float = 0.1):
        super().__init__()
        self.quantiles = tuple(quantiles)
        self.encoder = nn.LSTM(n_features, hidden, layers, batch_first=True, dropout=dropout)
        self.decoder = nn.LSTM(n_known, hidden, layers, batch_first=True, dropout=dropout)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, len(self.quantiles)))

    def forward(self, past: torch.Tensor, future_known: torch.Tensor) -> torch.Tensor:
        _, state = self.encoder(past)
        dec, _ = self.decoder(future_known, state)
        return self.head(dec)  # (B, H, Q)

    def median_index(self) -> int:
        return self.quantiles.index(0.5)


class QuantileLoss(nn.Module):
    """Pinball loss averaged over quantiles, horizon and batch."""

    def __init__(self, quantiles: Sequence[float]):
        super().__init__()
        self.register_buffer("q", torch.tensor(quantiles, dtype=torch.float32))

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        diff = target.unsqueeze(-1) - pred
        loss = torch.maximum(self.q * diff, (self.q - 1.0) * diff)
        return loss.mean()


def coverage(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Fraction of targets between the lowest and highest quantile."""
    lo, hi = pred[..., 0], pred[..., -1]
    return ((target >= lo) & (target <= hi)).float().mean()
