"""Lightweight metric base + binary AUROC, used by the tabular classification
trainer.

Mirrors the subset of the torchmetrics API we rely on (``add_state``,
``update``, ``compute``, ``reset``). List states are concatenated on
``compute`` and must be reset by the caller at the end of every epoch.
"""
import argparse
import logging
from typing import Any, Dict, List

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger(__name__)


class Metric:
    def __init__(self) -> None:
        self._defaults: Dict[str, Any] = {}

    def add_state(self, name: str, default: Any) -> None:
        self._defaults[name] = default
        setattr(self, name, [] if isinstance(default, list) else default.clone())

    def reset(self) -> None:
        for name, default in self._defaults.items():
            setattr(self, name, [] if isinstance(default, list) else default.clone())

    def update(self, *args, **kwargs) -> None:  # pragma: no cover
        raise NotImplementedError

    def compute(self):  # pragma: no cover
        raise NotImplementedError


class BinaryAUROC(Metric):
    def __init__(self, pos_label: int = 1) -> None:
        super().__init__()
        self.pos_label = pos_label
        self.add_state("preds", default=[])
        self.add_state("target", default=[])

    @torch.no_grad()
    def update(self, preds: torch.Tensor, target: torch.Tensor) -> None:
        if preds.shape != target.shape:
            raise ValueError(f"shape mismatch {preds.shape} vs {target.shape}")
        self.preds.append(preds.detach())
        self.target.append(target.detach().long())

    @torch.no_grad()
    def compute(self) -> torch.Tensor:
        preds = torch.cat(self.preds).float()
        target = torch.cat(self.target) == self.pos_label
        order = torch.argsort(preds, descending=True)
        target = target[order].float()
        tps = torch.cumsum(target, 0)
        fps = torch.cumsum(1 - target, 0)
        tpr = torch.cat([tps.new_zeros(1), tps / tps[-1].clamp(min=1)])
        fpr = torch.cat([fps.new_zeros(1), fps / fps[-1].clamp(min=1)])
        return torch.trapz(tpr, fpr)


class TabularMLP(nn.Module):
    def __init__(self, in_features: int, hidden: int = 256, dropout: float = 0.1):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.BatchNorm1d(hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)


def make_loaders(n_rows: int, n_feat: int, batch_size: int):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n_rows, n_feat, generator=g)
    w = torch.randn(n_feat, generator=g)
    y = (x @ w + 0.5 * torch.randn(n_rows, generator=g) > 0).float()
    split = int(0.9 * n_rows)
    return (
        DataLoader(TensorDataset(x[:split], y[:split]), batch_size=batch_size,
                   shuffle=True, drop_last=True),
        DataLoader(TensorDataset(x[split:], y[split:]), batch_size=batch_size * 4),
    )


@torch.no_grad()
def evaluate(net: nn.Module, loader: DataLoader, device: torch.device) -> float:
    net.eval()
    metric = BinaryAUROC()
    for xb, yb in loader:
        xb, yb = xb.to(device), yb.to(device)
        metric.update(torch.sigmoid(net(xb)), yb)
    return metric.compute().item()


def parse_args(argv: List[str] = None):
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--lr", type=float, default=3e-3)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, val_loader = make_loaders(args.rows, args.features, args.batch_size)

    net = TabularMLP(args.features).to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    train_auroc = BinaryAUROC()

    for epoch in range(args.epochs):
        net.train()
        running = 0.0
        for step, (xb, yb) in enumerate(train_loader):
            xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
            logits = net(xb)
            loss = F.binary_cross_entropy_with_logits(logits, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

            running += loss.item()
            train_auroc.update(torch.sigmoid(logits), yb)
            if step % 100 == 0:
                logger.info("epoch %d step %d loss %.4f", epoch, step, running / (step + 1))

        val_auc = evaluate(net, val_loader, device)
        logger.info(
            "epoch %d train_auroc %.4f val_auroc %.4f",
            epoch, train_auroc.compute().item(), val_auc,
        )
        train_auroc.reset()


if __name__ == "__main__":
    main()
