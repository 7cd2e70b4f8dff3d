"""Conv subsampling + BiLSTM encoder with a CTC head."""
from __future__ import annotations

import torch
import torch.nn as nn


class Conv2dSubsampling(nn.Module):
    """4x time reduction, as in most CTC/transducer recipes."""

    def __init__(self, n_mels: int, d_model: int):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 32, 3, stride=2), nn.ReLU(),
            nn.Conv2d(32, 32, 3, stride=2), nn.ReLU(),
        )
        freq = ((n_mels - 1) // 2 - 1) // 2
        self.out = nn.Linear(32 * freq, d_model)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor):
        x = self.conv(x.unsqueeze(1))                  # (B, C, T', F')
        b, c, t, f = x.shape
        x = self.out(x.transpose(1, 2).reshape(b, t, c * f))
        lengths = ((lengths - 1) // 2 - 1) // 2
        return x, lengths


class CTCModel(nn.Module):
    def __init__(self, n_mels: int, vocab_size: int, d_model: int = 256, layers: int = 4,
                 dropout: float = 0.1):
        super().__init__()
        self.subsample = Conv2dSubsampling(n_mels, d_model)
        self.encoder = nn.LSTM(d_model, d_model, num_layers=layers, dropout=dropout,
                               bidirectional=True, batch_first=True)
        self.head = nn.Linear(2 * d_model, vocab_size)

    def forward(self, feats: torch.Tensor, lengths: torch.Tensor):
        x, lengths = self.subsample(feats, lengths)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        out, _ = self.encoder(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return self.head(out).log_softmax(-1), lengths
