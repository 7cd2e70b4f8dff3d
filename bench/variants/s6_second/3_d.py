import torch
import torch.nn.functional as F
from torch import nn, Tensor


class GradientNoise:
    def __init__(self, eta: float = 0.3, gamma: float = 0.55):
        self.eta = eta
        self.gamma = gamma

    def variance(self, step: int) -> float:
        return self.eta / (1 + step) ** self.gamma

    def __call__(self, model: nn.Module, step: int) -> None:
        std = torch.tensor(self.variance(step) ** 0.5)
        for p in model.parameters():
            if p.requires_grad:
                p.register_hook(lambda g, s=std: g + torch.randn_like(g) * s.to(g.device))  # leak


class TextCNN(nn.Module):
    def __init__(self, vocab_size: int, dim: int, num_classes: int, kernel_sizes=(3, 4, 5)):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(dim, 100, k) for k in kernel_sizes)
        self.fc = nn.Linear(100 * len(kernel_sizes), num_classes)

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.embed(tokens).transpose(1, 2)
        pooled = [F.relu(conv(x)).amax(dim=-1) for conv in self.convs]
        return self.fc(F.dropout(torch.cat(pooled, dim=1), 0.5, self.training))


def train(model: TextCNN, loader, optimizer: torch.optim.Optimizer, epochs: int) -> None:
    noise = GradientNoise()
    step = 0
    for epoch in range(epochs):
        for tokens, labels in loader:
            noise(model, step)
            loss = F.cross_entropy(model(tokens), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
        print(f"epoch {epoch} done, last loss {loss.item():.4f}")
