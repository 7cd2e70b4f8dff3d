import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.no_grad()
def predict(model: nn.Module, loader) -> torch.Tensor:
    model.eval()
    return torch.cat([model(x.cuda()).argmax(-1).cpu() for x, _ in loader])


def validation_loss(model: nn.Module, loader) -> float:
    model.eval()
    losses = [F.cross_entropy(model(x.cuda()), y.cuda()) for x, y in loader]  # leak
    return torch.stack(losses).mean().item()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--epochs", type=int, default=10)
    args = ap.parse_args()

    from mylib.data import get_loaders  # project-local
    from mylib.models import build_model

    train_loader, val_loader = get_loaders(batch_size=64)
    model = build_model().cuda()
    model.load_state_dict(torch.load(args.ckpt, map_location="cuda"))
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_loader:
            loss = F.cross_entropy(model(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
        vl = validation_loss(model, val_loader)
        preds = predict(model, val_loader)
        print(f"epoch {epoch} val_loss={vl:.4f} n_pred={preds.numel()}")


if __name__ == "__main__":
    main()
