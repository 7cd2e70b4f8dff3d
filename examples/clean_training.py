"""The same script with each leak fixed. tensorlint reports nothing here."""

import collections

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Recorder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
        self.history = collections.deque(maxlen=8)  # bounded

    def forward(self, x):
        out = self.body(x)
        self.history.append(out.detach().cpu())
        return out


def collate(batch):
    xs, ys = zip(*batch)
    return torch.stack(xs), torch.stack(ys)  # stays on the CPU in the worker


def make_probe(model, x):
    norm = model(x).norm().item()  # a Python float
    return lambda: norm


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = TensorDataset(torch.randn(256, 32), torch.randint(0, 4, (256,)))
    loader = DataLoader(data, batch_size=32, num_workers=2, collate_fn=collate, pin_memory=True)
    model = Recorder().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total_loss = 0.0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    with torch.no_grad():
        probes = [make_probe(model, x)]
    return total_loss, probes


if __name__ == "__main__":
    main()
