import torch.nn.functional as F


def evaluate(model, loader):
    model.eval()
    total = 0
    for x, y in loader:
        out = model(x)
        total += F.cross_entropy(out, y)  # leak
    return total
