"""Graph classification with GIN on TU datasets (10-fold CV).

Usage:
    python main_gin.py --dataset PROTEINS --fold 0
"""
import argparse
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.datasets import TUDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GINConv, global_add_pool
from sklearn.model_selection import StratifiedKFold


class GIN(nn.Module):
    def __init__(self, in_dim, hidden, num_classes, num_layers=5, dropout=0.5):
        super().__init__()
        self.convs = nn.ModuleList()
        self.bns = nn.ModuleList()
        for i in range(num_layers - 1):
            mlp = nn.Sequential(nn.Linear(in_dim if i == 0 else hidden, hidden), nn.ReLU(),
                                nn.Linear(hidden, hidden))
            self.convs.append(GINConv(mlp, train_eps=True))
            self.bns.append(nn.BatchNorm1d(hidden))
        self.heads = nn.ModuleList([nn.Linear(in_dim, num_classes)] +
                                   [nn.Linear(hidden, num_classes) for _ in range(num_layers - 1)])
        self.dropout = dropout

    def forward(self, data):
        x, edge_index, batch = data.x, data.edge_index, data.batch
        hs = [x]
        for conv, bn in zip(self.convs, self.bns):
            x = F.relu(bn(conv(x, edge_index)))
            hs.append(x)
        logits = 0
        for h, head in zip(hs, self.heads):
            logits = logits + F.dropout(head(global_add_pool(h, batch)), self.dropout, self.training)
        out = {"logits": logits}
        if data.y is not None:
            out["loss"] = F.cross_entropy(logits, data.y)
        return out


class Trainer:
    def __init__(self, model, optimizer, scheduler, device):
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.device = device

    def _step(self, data):
        data = data.to(self.device)
        out = self.model(data)
        self.optimizer.zero_grad()
        out["loss"].backward()
        self.optimizer.step()
        return {
            "loss": out["loss"].detach(),
            "num_graphs": data.num_graphs,
            "correct": (out["logits"].detach().argmax(-1) == data.y).sum(),
        }

    @staticmethod
    def _epoch_end(step_outputs):
        n = sum(o["num_graphs"] for o in step_outputs)
        loss = sum(o["loss"] * o["num_graphs"] for o in step_outputs) / n
        acc = sum(o["correct"] for o in step_outputs) / n
        return loss.item(), acc.item()

    def train_epoch(self, loader):
        self.model.train()
        step_outputs = []
        for data in loader:
            out = self._step(data)
            step_outputs.append(out)
        self.scheduler.step()
        return self._epoch_end(step_outputs)

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        correct = 0
        for data in loader:
            data = data.to(self.device)
            pred = self.model(data)["logits"].argmax(-1)
            correct += int((pred == data.y).sum())
        return correct / len(loader.dataset)


def split_indices(dataset, fold, seed):
    skf = StratifiedKFold(n_splits=10, shuffle=True, random_state=seed)
    labels = dataset.data.y.numpy()
    return list(skf.split(np.zeros(len(labels)), labels))[fold]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="PROTEINS")
    parser.add_argument("--fold", type=int, default=0)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=350)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    random.seed(args.seed)
    np.random.seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    dataset = TUDataset("data/TU", name=args.dataset, use_node_attr=True)
    train_idx, test_idx = split_indices(dataset, args.fold, args.seed)
    train_loader = DataLoader(dataset[train_idx.tolist()], batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(dataset[test_idx.tolist()], batch_size=args.batch_size)

    model = GIN(dataset.num_features, args.hidden, dataset.num_classes, args.layers).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=50, gamma=0.5)
    trainer = Trainer(model, optimizer, scheduler, device)

    best = 0.0
    for epoch in range(1, args.epochs + 1):
        loss, train_acc = trainer.train_epoch(train_loader)
        test_acc = trainer.evaluate(test_loader)
        best = max(best, test_acc)
        print(f"Epoch {epoch:03d} | loss {loss:.4f} | train {train_acc:.4f} | "
              f"test {test_acc:.4f} | best {best:.4f}")


if __name__ == "__main__":
    main()
