"""Mesh GNN on a fixed-resolution grid with a cached symmetric normalisation."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.utils import add_self_loops, degree, grid


@functools.lru_cache(maxsize=8)
def grid_graph_cached(height: int, width: int, device: str):
    edge_index, _ = grid(height, width, device=torch.device(device))
    num_nodes = height * width
    edge_index, _ = add_self_loops(edge_index, num_nodes=num_nodes)
    row, col = edge_index
    deg = degree(col, num_nodes, dtype=torch.float32)
    deg_inv_sqrt = deg.pow(-0.5)
    deg_inv_sqrt[deg_inv_sqrt == float("inf")] = 0
    return edge_index, deg_inv_sqrt[row] * deg_inv_sqrt[col]


class GCNLayer(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_dim))

    def forward(self, x, edge_index, norm):
        h = self.lin(x)
        msg = h[:, edge_index[0]] * norm.view(1, -1, 1)
        out = torch.zeros_like(h).index_add_(1, edge_index[1], msg)
        return out + self.bias


class MeshGCN(nn.Module):
    def __init__(self, in_dim, hidden, out_dim, height, width, num_layers=4):
        super().__init__()
        self.height, self.width = height, width
        dims = [in_dim] + [hidden] * num_layers
        self.layers = nn.ModuleList(GCNLayer(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(num_layers))
        self.head = nn.Linear(hidden, out_dim)

    def forward(self, x):
        # x: [batch, H*W, in_dim] on a fixed grid
        edge_index, norm = grid_graph_cached(self.height, self.width, str(x.device))
        for layer, ln in zip(self.layers, self.norms):
            x = F.gelu(ln(layer(x, edge_index, norm)))
        return self.head(x)


def train(model, loader, epochs=100, device="cuda"):
    model = model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        total, count = 0.0, 0
        for x, y in loader:
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            pred = model(x)
            loss = F.mse_loss(pred, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * x.size(0)
            count += x.size(0)
        print(f"epoch {epoch:03d} mse {total / count:.5f}")
