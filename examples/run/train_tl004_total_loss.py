"""TL004 in training: `total_loss += loss` after backward() chains every step's autograd nodes
on the host (the activations are freed). Try:

    tensorlint verify --run examples/run/train_tl004_total_loss.py
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = TensorDataset(torch.randn(3200, 32), torch.randint(0, 4, (3200,)))
    loader = DataLoader(data, batch_size=32)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total_loss = 0.0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss
    print(f"mean loss {total_loss.item() / len(loader):.3f}")


if __name__ == "__main__":
    main()
