"""Graph convolution layers for the molecule property models (no PyG needed).

``GCNConv`` memoises the symmetric normalisation of each graph it sees, since
computing degrees + adding self loops is a noticeable share of step time for
small molecules.
"""
import argparse
import logging
from typing import Dict, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger(__name__)


def add_self_loops(edge_index, num_nodes):
    loop = torch.arange(num_nodes, device=edge_index.device)
    return torch.cat([edge_index, torch.stack([loop, loop])], dim=1)


def gcn_norm(edge_index, num_nodes, dtype=torch.float32):
    edge_index = add_self_loops(edge_index, num_nodes)
    row, col = edge_index
    deg = torch.zeros(num_nodes, dtype=dtype, device=edge_index.device)
    deg.index_add_(0, col, torch.ones(col.numel(), dtype=dtype, device=col.device))
    dinv = deg.pow(-0.5)
    dinv[torch.isinf(dinv)] = 0
    return edge_index, dinv[row] * dinv[col]


def graph_key(edge_index: torch.Tensor, num_nodes: int) -> Tuple[int, int, int]:
    raw = edge_index.detach().cpu().numpy()
    return num_nodes, raw.shape[1], hash(raw.tobytes())


class GCNConv(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, bias: bool = True):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None
        self._norm_cache: Dict[Tuple[int, int, int], Tuple[torch.Tensor, torch.Tensor]] = {}

    def _normalized(self, edge_index, num_nodes):
        key = graph_key(edge_index, num_nodes)
        hit = self._norm_cache.get(key)
        if hit is None:
            hit = gcn_norm(edge_index, num_nodes)
            self._norm_cache[key] = hit  # leak
        return hit

    def forward(self, x, edge_index):
        ei, w = self._normalized(edge_index, x.size(0))
        h = self.lin(x)
        out = torch.zeros_like(h)
        out.index_add_(0, ei[1], h[ei[0]] * w.unsqueeze(-1))
        if self.bias is not None:
            out = out + self.bias
        return out


def global_mean_pool(x, batch, num_graphs):
    out = torch.zeros(num_graphs, x.size(1), device=x.device, dtype=x.dtype)
    out.index_add_(0, batch, x)
    cnt = torch.bincount(batch, minlength=num_graphs).clamp(min=1).unsqueeze(-1)
    return out / cnt


class MolGCN(nn.Module):
    def __init__(self, num_atom_types=120, hidden=256, layers=4, num_tasks=12, dropout=0.2):
        super().__init__()
        self.embed = nn.Embedding(num_atom_types, hidden)
        self.convs = nn.ModuleList(GCNConv(hidden, hidden) for _ in range(layers))
        self.norms = nn.ModuleList(nn.BatchNorm1d(hidden) for _ in range(layers))
        self.dropout = dropout
        self.head = nn.Linear(hidden, num_tasks)

    def forward(self, data):
        x = self.embed(data.x)
        for conv, norm in zip(self.convs, self.norms):
            x = x + F.dropout(F.relu(norm(conv(x, data.edge_index))), self.dropout, self.training)
        return self.head(global_mean_pool(x, data.batch, data.num_graphs))


def train_epoch(model, loader, optimizer, device):
    model.train()
    total, n = 0.0, 0
    for data in loader:
        data = data.to(device)
        out = model(data)
        mask = ~torch.isnan(data.y)
        loss = F.binary_cross_entropy_with_logits(out[mask], data.y[mask])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * data.num_graphs
        n += data.num_graphs
    return total / max(n, 1)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--hidden", type=int, default=256)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)

    from molloader import load_tox21  # project-local, yields Batch objects
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, val_loader = load_tox21(batch_size=args.batch_size, shuffle=True)
    model = MolGCN(hidden=args.hidden).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        loss = train_epoch(model, train_loader, opt, device)
        log.info("epoch %03d loss %.4f", epoch, loss)


if __name__ == "__main__":
    main()
