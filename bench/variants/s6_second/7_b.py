import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader


class CharGRU(nn.Module):
    def __init__(self, vocab_size: int, dim: int = 512, layers: int = 2):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.gru = nn.GRU(dim, dim, layers, batch_first=True)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, x: Tensor, h: Tensor | None = None) -> tuple[Tensor, Tensor]:
        out, h = self.gru(self.embed(x), h)
        return self.head(out), h


def train_epoch(model: CharGRU, loader: DataLoader, optimizer: torch.optim.Optimizer, device: str) -> None:
    model.train()
    h = None
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        if h is not None:
            h = h.detach()
        logits, h = model(x, h)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()


def evaluate_stream(model: CharGRU, loader: DataLoader, device: str) -> float:
    model.eval()
    h = None
    total_nll, total_tokens = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        logits, h = model(x, h)  # leak
        total_nll += F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum").item()
        total_tokens += y.numel()
    return total_nll / max(total_tokens, 1) / torch.log(torch.tensor(2.0)).item()


def run(model: CharGRU, train_loader: DataLoader, val_loader: DataLoader, epochs: int,
        device: str = "cuda") -> None:
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(epochs):
        train_epoch(model, train_loader, optimizer, device)
        print(f"epoch {epoch}: val bpc {evaluate_stream(model, val_loader, device):.3f}")
