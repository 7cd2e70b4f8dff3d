"""Graph classification with a plain-PyTorch GCN (no PyG dependency).

Batches are produced by ``collate_graphs`` which concatenates node features
and offsets edge indices, like PyG's ``Batch.from_data_list``. Edge weights
are computed once per graph when the dataset is loaded and batched with it.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


def normalized_adjacency(edge_index, num_nodes):
    """Symmetric normalisation D^-1/2 (A + I) D^-1/2 as (row, col, weight)."""
    loops = torch.arange(num_nodes, device=edge_index.device)
    row = torch.cat([edge_index[0], loops])
    col = torch.cat([edge_index[1], loops])
    deg = torch.zeros(num_nodes, device=edge_index.device).scatter_add_(0, row, torch.ones_like(row, dtype=torch.float))
    dinv = deg.pow(-0.5)
    dinv[torch.isinf(dinv)] = 0
    return row, col, dinv[row] * dinv[col]


def propagate(x, row, col, weight):
    msg = x[col] * weight.unsqueeze(-1)
    out = torch.zeros_like(x)
    out.index_add_(0, row, msg)
    return out


class GCNLayer(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_dim))

    def forward(self, x, edge_index, edge_weight):
        return propagate(self.lin(x), edge_index[0], edge_index[1], edge_weight) + self.bias


class GraphClassifier(nn.Module):
    def __init__(self, in_dim, hidden, n_classes, n_layers=3, dropout=0.5):
        super().__init__()
        dims = [in_dim] + [hidden] * n_layers
        self.convs = nn.ModuleList(GCNLayer(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.norms = nn.ModuleList(nn.BatchNorm1d(hidden) for _ in range(n_layers))
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, n_classes))
        self.dropout = dropout

    def forward(self, x, edge_index, edge_weight, batch, num_graphs):
        for conv, bn in zip(self.convs, self.norms):
            x = F.relu(bn(conv(x, edge_index, edge_weight)))
            x = F.dropout(x, self.dropout, self.training)
        pooled = torch.zeros(num_graphs, x.size(1), device=x.device).index_add_(0, batch, x)
        counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1).unsqueeze(-1)
        return self.head(pooled / counts)


def precompute(graphs):
    out = []
    for x, ei, y in graphs:
        row, col, w = normalized_adjacency(ei, x.size(0))
        out.append((x, torch.stack([row, col]), w, y))
    return out


def collate_graphs(samples):
    xs, eis, ws, batch, ys = [], [], [], [], []
    offset = 0
    for gi, (x, ei, w, y) in enumerate(samples):
        xs.append(x)
        eis.append(ei + offset)
        ws.append(w)
        batch.append(torch.full((x.size(0),), gi, dtype=torch.long))
        ys.append(y)
        offset += x.size(0)
    return torch.cat(xs), torch.cat(eis, 1), torch.cat(ws), torch.cat(batch), torch.stack(ys)


def run_epoch(model, loader, opt=None, device="cuda"):
    train = opt is not None
    model.train(train)
    correct = total = 0
    loss_sum = 0.0
    for x, ei, w, b, y in loader:
        x, ei, w, b, y = x.to(device), ei.to(device), w.to(device), b.to(device), y.to(device)
        with torch.set_grad_enabled(train):
            out = model(x, ei, w, b, y.size(0))
            loss = F.cross_entropy(out, y)
        if train:
            opt.zero_grad()
            loss.backward()
            opt.step()
        loss_sum += loss.item() * y.size(0)
        correct += (out.argmax(-1) == y).sum().item()
        total += y.size(0)
    return loss_sum / total, correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="proteins.pt")
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--bs", type=int, default=64)
    args = ap.parse_args()
    graphs = precompute(torch.load(args.data))  # list of (x, edge_index, y)
    split = int(0.9 * len(graphs))
    tr = DataLoader(graphs[:split], args.bs, shuffle=True, collate_fn=collate_graphs)
    va = DataLoader(graphs[split:], args.bs, collate_fn=collate_graphs)
    model = GraphClassifier(graphs[0][0].size(1), args.hidden, int(max(g[3] for g in graphs)) + 1).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=5e-4)
    for ep in range(args.epochs):
        tl, ta = run_epoch(model, tr, opt)
        vl, vacc = run_epoch(model, va)
        print(f"{ep:03d} train {tl:.4f}/{ta:.3f} val {vl:.4f}/{vacc:.3f}")


if __name__ == "__main__":
    main()
