import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def validation_loss(model: nn.Module, loader) -> float:
    model.eval()
    with torch.no_grad():
        losses = [F.cross_entropy(model(x.cuda()), y.cuda(), reduction="sum") for x, y in loader]
    n = len(loader.dataset)
    return torch.stack(losses).sum().item() / n


@torch.no_grad()
def predict_into(model: nn.Module, loader, n_items: int, n_classes: int) -> torch.Tensor:
    model.eval()
    out = torch.empty(n_items, n_classes)
    offset = 0
    for x, _ in loader:
        logits = model(x.cuda())
        out[offset:offset + len(x)] = logits.cpu()
        offset += len(x)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=10)
    args = ap.parse_args()

    from mylib.data import get_loaders  # project-local
    from mylib.models import build_model

    train_loader, val_loader = get_loaders(batch_size=64)
    model = build_model().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_loader:
            loss = F.cross_entropy(model(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
        vl = validation_loss(model, val_loader)
        probs = predict_into(model, val_loader, len(val_loader.dataset), 10).softmax(-1)
        print(f"epoch {epoch} val_loss={vl:.4f} conf={probs.max(-1).values.mean():.3f}")


if __name__ == "__main__":
    main()
