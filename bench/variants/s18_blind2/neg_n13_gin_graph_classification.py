"""GIN on TU datasets with 10-fold cross-validation (PyG)."""
import argparse
import os.path as osp

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.model_selection import StratifiedKFold
from torch.nn import BatchNorm1d, Linear, ReLU, Sequential
from torch_geometric.datasets import TUDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GINConv, global_add_pool


class GIN(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels, num_layers=5, dropout=0.5):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        for i in range(num_layers):
            mlp = Sequential(Linear(in_channels if i == 0 else hidden, hidden), BatchNorm1d(hidden), ReLU(),
                             Linear(hidden, hidden), ReLU())
            self.convs.append(GINConv(mlp, train_eps=True))
        self.lin1 = Linear(hidden * num_layers, hidden)
        self.lin2 = Linear(hidden, out_channels)
        self.dropout = dropout

    def forward(self, x, edge_index, batch):
        xs = []
        for conv in self.convs:
            x = conv(x, edge_index)
            xs.append(global_add_pool(x, batch))
        h = F.relu(self.lin1(torch.cat(xs, dim=1)))
        h = F.dropout(h, p=self.dropout, training=self.training)
        return self.lin2(h)


def forward_batch(model, data, device):
    data = data.to(device)
    out = model(data.x, data.edge_index, data.batch)
    return {"loss": F.cross_entropy(out, data.y), "pred": out.argmax(-1), "n": data.num_graphs, "y": data.y}


def train(model, loader, optimizer, device):
    model.train()
    total_loss = 0
    for data in loader:
        optimizer.zero_grad()
        res = forward_batch(model, data, device)
        res["loss"].backward()
        optimizer.step()
        total_loss += float(res["loss"]) * res["n"]
    return total_loss / len(loader.dataset)


@torch.no_grad()
def test(model, loader, device):
    model.eval()
    correct = 0
    for data in loader:
        res = forward_batch(model, data, device)
        correct += int((res["pred"] == res["y"]).sum())
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="PROTEINS")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=350)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--folds", type=int, default=10)
    args = parser.parse_args()

    path = osp.join(osp.dirname(osp.realpath(__file__)), "data", "TU")
    dataset = TUDataset(path, name=args.dataset).shuffle()
    if dataset.num_node_features == 0:
        raise SystemExit("dataset has no node features; use OneHotDegree transform")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    skf = StratifiedKFold(args.folds, shuffle=True, random_state=12345)
    labels = dataset.data.y.numpy() if hasattr(dataset, "data") else dataset.y.numpy()
    fold_acc = []
    for fold, (tr_idx, te_idx) in enumerate(skf.split(np.zeros(len(labels)), labels)):
        train_loader = DataLoader(dataset[torch.as_tensor(tr_idx)], args.batch_size, shuffle=True)
        test_loader = DataLoader(dataset[torch.as_tensor(te_idx)], args.batch_size)
        model = GIN(dataset.num_features, args.hidden, dataset.num_classes, args.layers).to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=50, gamma=0.5)
        best = 0.0
        for epoch in range(1, args.epochs + 1):
            loss = train(model, train_loader, optimizer, device)
            scheduler.step()
            acc = test(model, test_loader, device)
            best = max(best, acc)
            if epoch % 25 == 0:
                print(f"fold {fold:02d} epoch {epoch:03d} loss {float(loss):.4f} test {acc:.4f}")
        fold_acc.append(best)
    print(f"{args.dataset}: {np.mean(fold_acc):.4f} +- {np.std(fold_acc):.4f}")


if __name__ == "__main__":
    main()
