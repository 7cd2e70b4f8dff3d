"""TL007 fixed: only the messages are kept, not the exceptions and their tracebacks. Try:

    tensorlint verify --run examples/run/train_tl007_kept_exception_fixed.py
"""

import torch
from torch import nn

errors = []


def check_logits(logits):
    scale = logits.abs().amax(dim=1)  # one float per sample
    if (scale > 0).any():
        raise ValueError(f"{int((scale > 0).sum())} samples with non-zero logits")


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(100):
        x, y = torch.randn(256, 32, device=device), torch.randint(0, 4, (256,), device=device)
        optimizer.zero_grad()
        logits = model(x)
        try:
            check_logits(logits)
        except ValueError as error:
            errors.append(str(error))
        nn.functional.cross_entropy(logits, y).backward()
        optimizer.step()
    print(f"{len(errors)} warnings")


if __name__ == "__main__":
    main()
