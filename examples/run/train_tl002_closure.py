"""TL002: a callback registered every step captures that step's activation. Try:

    tensorlint verify --run examples/run/train_tl002_closure.py
"""

import torch
from torch import nn

callbacks = []


def register_probe(layer, x):
    activation = torch.relu(layer(x))
    callbacks.append(lambda: activation.norm())  # keeps `activation` and its graph alive
    return activation


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(100):
        x, y = torch.randn(32, 32, device=device), torch.randint(0, 4, (32,), device=device)
        optimizer.zero_grad()
        hidden = register_probe(model[0], x)
        loss = nn.functional.cross_entropy(model[2](hidden), y)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
