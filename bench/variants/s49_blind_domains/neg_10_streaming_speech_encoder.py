import torch
import torch.nn as nn


class Conv2dSubsampling(nn.Module):
    def __init__(self, n_mels, d_model):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, d_model, 3, stride=2), nn.ReLU(),
            nn.Conv2d(d_model, d_model, 3, stride=2), nn.ReLU(),
        )
        self.proj = nn.Linear(d_model * (((n_mels - 1) // 2 - 1) // 2), d_model)

    def forward(self, x):
        x = self.conv(x.unsqueeze(1))
        b, c, t, f = x.shape
        return self.proj(x.transpose(1, 2).reshape(b, t, c * f))


class StreamingEncoder(nn.Module):
    """Chunk-wise transformer encoder that attends to a few previous chunks."""

    def __init__(self, n_mels=80, d_model=256, n_heads=4, n_layers=6, context_chunks=4):
        super().__init__()
        self.subsample = Conv2dSubsampling(n_mels, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers)
        self.context_chunks = context_chunks
        self.past_chunks = []

    def forward(self, chunk):
        x = self.subsample(chunk)
        self.past_chunks.insert(0, x)
        del self.past_chunks[self.context_chunks:]
        context = torch.cat(self.past_chunks[: self.context_chunks][::-1], dim=1)
        out = self.encoder(context)
        return out[:, -x.size(1):]

    def reset(self):
        self.past_chunks = []


@torch.inference_mode()
def transcribe_stream(encoder, ctc_head, feature_stream, chunk_frames=64):
    encoder.eval()
    encoder.reset()
    pieces = []
    buffer = []
    for frame in feature_stream:
        buffer.append(frame)
        if len(buffer) == chunk_frames:
            chunk = torch.stack(buffer, dim=0).unsqueeze(0).cuda()
            logits = ctc_head(encoder(chunk))
            pieces.append(logits.argmax(-1).squeeze(0).cpu())
            buffer = []
    return torch.cat(pieces) if pieces else torch.empty(0, dtype=torch.long)
