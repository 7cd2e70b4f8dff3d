"""Conv front-end + BiLSTM acoustic model trained with CTC."""
import torch
import torch.nn as nn


class ConvSubsampler(nn.Module):
    """Two strided 2-D convs: 4x time reduction."""

    def __init__(self, n_mels: int, channels: int = 32):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, channels, 3, stride=2, padding=1), nn.GELU(),
            nn.Conv2d(channels, channels, 3, stride=2, padding=1), nn.GELU(),
        )
        self.out_dim = channels * ((n_mels + 3) // 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (B, T, F) -> (B, T/4, C*F/4)
        x = self.conv(x.unsqueeze(1))
        b, c, t, f = x.shape
        return x.transpose(1, 2).reshape(b, t, c * f)


class CTCModel(nn.Module):
    def __init__(self, n_mels: int = 80, hidden: int = 320, layers: int = 3,
                 vocab_size: int = 29, dropout: float = 0.1):
        super().__init__()
        self.front = ConvSubsampler(n_mels)
        self.proj = nn.Linear(self.front.out_dim, hidden)
        self.rnn = nn.LSTM(hidden, hidden, num_layers=layers, bidirectional=True,
                           batch_first=True, dropout=dropout)
        self.head = nn.Linear(2 * hidden, vocab_size)

    @staticmethod
    def output_lengths(lengths: torch.Tensor) -> torch.Tensor:
        for _ in range(2):
            lengths = torch.div(lengths + 1, 2, rounding_mode="floor")
        return lengths

    def forward(self, feats: torch.Tensor, feat_lens: torch.Tensor):
        x = self.proj(self.front(feats))
        out_lens = self.output_lengths(feat_lens)
        packed = nn.utils.rnn.pack_padded_sequence(x, out_lens.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        x, _ = self.rnn(packed)
        x, _ = nn.utils.rnn.pad_packed_sequence(x, batch_first=True)
        return self.head(x).log_softmax(-1), out_lens


def greedy_decode(log_probs: torch.Tensor, lengths: torch.Tensor, blank: int = 0):
    preds = log_probs.argmax(-1)
    hyps = []
    for seq, n in zip(preds, lengths.tolist()):
        out, prev = [], blank
        for tok in seq[:n].tolist():
            if tok != prev and tok != blank:
                out.append(tok)
            prev = tok
        hyps.append(out)
    return hyps
