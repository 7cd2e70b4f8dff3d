"""TL001: the model keeps every step's output in `self.history`. Try:

    tensorlint verify --run examples/run/train_tl001_feature_cache.py -- --epochs 2
"""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Recorder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
        self.history = []

    def forward(self, x):
        out = self.body(x)
        self.history.append(out.detach())  # grows every step; detach does not bound it
        return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    print(f"training for {args.epochs} epochs")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = TensorDataset(torch.randn(3200, 32), torch.randint(0, 4, (3200,)))
    loader = DataLoader(data, batch_size=32)
    model = Recorder().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(args.epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
    print("done")


if __name__ == "__main__":
    main()
