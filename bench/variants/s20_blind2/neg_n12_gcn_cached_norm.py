"""Full-batch node classification (Planetoid) with a cached GCN layer.

Like ``torch_geometric.nn.GCNConv(cached=True)``: in the transductive setting
the graph never changes, so the normalised adjacency is computed on the first
call and reused afterwards (one slot, overwritten, never grows).
"""
import argparse
import logging
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger(__name__)


def gcn_norm(edge_index, num_nodes, dtype=torch.float32):
    loop = torch.arange(num_nodes, device=edge_index.device)
    edge_index = torch.cat([edge_index, torch.stack([loop, loop])], dim=1)
    row, col = edge_index
    deg = torch.zeros(num_nodes, dtype=dtype, device=edge_index.device)
    deg.index_add_(0, col, torch.ones(col.numel(), dtype=dtype, device=col.device))
    dinv = deg.pow(-0.5)
    dinv[torch.isinf(dinv)] = 0
    return edge_index, dinv[row] * dinv[col]


class GCNConv(nn.Module):
    def __init__(self, in_channels, out_channels, cached: bool = False, bias: bool = True):
        super().__init__()
        self.cached = cached
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None
        self._cached_edge_index: Optional[Tuple[torch.Tensor, torch.Tensor]] = None

    def reset_parameters(self):
        self.lin.reset_parameters()
        if self.bias is not None:
            nn.init.zeros_(self.bias)
        self._cached_edge_index = None

    def forward(self, x, edge_index):
        cache = self._cached_edge_index
        if cache is None:
            ei, w = gcn_norm(edge_index, x.size(0), dtype=x.dtype)
            if self.cached:
                self._cached_edge_index = (ei, w)
        else:
            ei, w = cache
        h = self.lin(x)
        out = torch.zeros_like(h)
        out.index_add_(0, ei[1], h[ei[0]] * w.unsqueeze(-1))
        if self.bias is not None:
            out = out + self.bias
        return out


class GCN(nn.Module):
    def __init__(self, in_channels, hidden, out_channels, dropout=0.5):
        super().__init__()
        self.conv1 = GCNConv(in_channels, hidden, cached=True)
        self.conv2 = GCNConv(hidden, out_channels, cached=True)
        self.dropout = dropout

    def forward(self, x, edge_index):
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = F.relu(self.conv1(x, edge_index))
        x = F.dropout(x, p=self.dropout, training=self.training)
        return self.conv2(x, edge_index)


def train(model, data, optimizer):
    model.train()
    optimizer.zero_grad()
    out = model(data.x, data.edge_index)
    loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
    loss.backward()
    optimizer.step()
    return float(loss)


@torch.no_grad()
def test(model, data):
    model.eval()
    pred = model(data.x, data.edge_index).argmax(dim=-1)
    accs = []
    for mask in (data.train_mask, data.val_mask, data.test_mask):
        accs.append(int((pred[mask] == data.y[mask]).sum()) / int(mask.sum()))
    return accs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="Cora")
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=200)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    from torch_geometric.datasets import Planetoid
    import torch_geometric.transforms as T

    dataset = Planetoid("data/Planetoid", args.dataset, transform=T.NormalizeFeatures())
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = dataset[0].to(device)
    model = GCN(dataset.num_features, args.hidden, dataset.num_classes).to(device)
    optimizer = torch.optim.Adam([
        dict(params=model.conv1.parameters(), weight_decay=5e-4),
        dict(params=model.conv2.parameters(), weight_decay=0),
    ], lr=args.lr)

    best_val = test_acc = 0.0
    for epoch in range(1, args.epochs + 1):
        loss = train(model, data, optimizer)
        train_acc, val_acc, tmp_test_acc = test(model, data)
        if val_acc > best_val:
            best_val, test_acc = val_acc, tmp_test_acc
        log.info("epoch %03d loss %.4f train %.4f val %.4f test %.4f",
                 epoch, loss, train_acc, val_acc, test_acc)


if __name__ == "__main__":
    main()
