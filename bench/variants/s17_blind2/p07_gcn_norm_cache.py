"""Mini-batch GCN training on molecular graphs with a cached symmetric normalisation."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.loader import DataLoader
from torch_geometric.nn import global_mean_pool
from torch_geometric.utils import add_self_loops, degree


@functools.lru_cache(maxsize=None)  # leak
def gcn_norm_cached(edge_index: torch.Tensor, num_nodes: int):
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

    def forward(self, x, edge_index):
        edge_index, norm = gcn_norm_cached(edge_index, x.size(0))
        h = self.lin(x)
        msg = h[edge_index[0]] * norm.unsqueeze(-1)
        out = torch.zeros_like(h).index_add_(0, edge_index[1], msg)
        return out + self.bias


class GCN(nn.Module):
    def __init__(self, in_dim, hidden, num_tasks, num_layers=3, dropout=0.2):
        super().__init__()
        dims = [in_dim] + [hidden] * num_layers
        self.layers = nn.ModuleList(GCNLayer(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.norms = nn.ModuleList(nn.BatchNorm1d(hidden) for _ in range(num_layers))
        self.head = nn.Linear(hidden, num_tasks)
        self.dropout = dropout

    def forward(self, data):
        x = data.x.float()
        for layer, norm in zip(self.layers, self.norms):
            x = F.dropout(F.relu(norm(layer(x, data.edge_index))), self.dropout, self.training)
        return self.head(global_mean_pool(x, data.batch))


def train(model, dataset, epochs=100, device="cuda"):
    loader = DataLoader(dataset, batch_size=128, shuffle=True)
    model = model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        total, count = 0.0, 0
        for data in loader:
            data = data.to(device)
            pred = model(data)
            mask = ~torch.isnan(data.y)
            loss = F.binary_cross_entropy_with_logits(pred[mask], data.y[mask].float())
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * data.num_graphs
            count += data.num_graphs
        print(f"epoch {epoch:03d} bce {total / count:.4f}")
