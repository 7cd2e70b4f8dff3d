"""Four leaks (TL001-TL004) and CUDA started before workers fork (TL013). Try: tensorlint examples/"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Recorder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
        self.history = []

    def forward(self, x):
        out = self.body(x)
        self.history.append(out.detach())  # TL001: grows every call; detach does not bound it
        return out


def collate(batch):
    xs, ys = zip(*batch)
    return torch.stack(xs).to(device), torch.stack(ys).to(device)  # TL003: CUDA in a worker


def make_probe(model: nn.Module, x):
    activation = model(x)
    return lambda: activation.norm()  # TL002: keeps `activation` and its graph alive


def main():
    data = TensorDataset(torch.randn(256, 32), torch.randint(0, 4, (256,)))
    loader = DataLoader(data, batch_size=32, num_workers=2, collate_fn=collate)
    model = Recorder().to(device)  # TL013: CUDA initialised before the workers fork
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total_loss = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss  # TL004: the autograd history grows every step
    probes = [make_probe(model, x)]
    return total_loss, probes


if __name__ == "__main__":
    main()
