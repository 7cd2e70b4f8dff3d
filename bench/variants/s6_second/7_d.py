import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader


class StreamingEncoder(nn.Module):
    def __init__(self, n_mels: int = 80, hidden_size: int = 512, num_layers: int = 3):
        super().__init__()
        self.hidden_size = hidden_size
        self.frontend = nn.Sequential(nn.Linear(n_mels, hidden_size), nn.GELU())
        self.lstm = nn.LSTM(hidden_size, hidden_size, num_layers, batch_first=True)

    def forward(self, frames: Tensor, state=None):
        out, state = self.lstm(self.frontend(frames), state)
        return out, state


class FrameProbe:
    def __init__(self, encoder: StreamingEncoder, num_classes: int, lr: float = 1e-3, device: str = "cuda"):
        self.encoder = encoder.to(device).eval()
        self.probe = nn.Linear(encoder.hidden_size, num_classes).to(device)
        self.optimizer = torch.optim.Adam(self.probe.parameters(), lr=lr)
        self.device = device
        self.state = None

    def step(self, frames: Tensor, labels: Tensor) -> float:
        frames, labels = frames.to(self.device), labels.to(self.device)
        feats, self.state = self.encoder(frames, self.state)  # leak
        logits = self.probe(feats.detach())
        loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-1)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, loader: DataLoader, epochs: int, log_every: int = 200) -> None:
        for epoch in range(epochs):
            for i, (frames, labels) in enumerate(loader):
                loss = self.step(frames, labels)
                if i % log_every == 0:
                    print(f"epoch {epoch} iter {i} probe loss {loss:.4f}")
