"""TL004 fixed, evaluation: the loop runs under `torch.no_grad()` and accumulates `loss.item()`.
No optimizer here: the verifier samples at every DataLoader batch. Try:

    tensorlint verify --run examples/run/eval_tl004_total_loss_fixed.py
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def evaluate(model, loader, device):
    model.eval()
    total_loss = 0.0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.cross_entropy(model(x), y)
            total_loss += loss.item()
    return total_loss / len(loader)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = TensorDataset(torch.randn(3200, 32), torch.randint(0, 4, (3200,)))
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    print(f"validation loss {evaluate(model, DataLoader(data, batch_size=32), device):.3f}")


if __name__ == "__main__":
    main()
