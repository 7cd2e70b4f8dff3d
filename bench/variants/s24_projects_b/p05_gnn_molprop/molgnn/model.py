"""GCN encoder with a graph-level readout for regression / classification."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

import molgnn.utils as U


class GCNConv(nn.Module):
    def __init__(self, in_dim: int, out_dim: int, bias: bool = True):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_dim)) if bias else None
        nn.init.xavier_uniform_(self.lin.weight)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        num_nodes = x.size(0)
        ei, w = U.gcn_norm(edge_index, num_nodes)
        h = self.lin(x)
        msg = h[ei[0]] * w.unsqueeze(-1)
        out = U.scatter_add(msg, ei[1], num_nodes)
        if self.bias is not None:
            out = out + self.bias
        return out


class MolGCN(nn.Module):
    def __init__(self, in_dim: int, hidden: int = 128, layers: int = 4, out_dim: int = 1,
                 dropout: float = 0.2):
        super().__init__()
        self.embed = nn.Linear(in_dim, hidden)
        self.convs = nn.ModuleList([GCNConv(hidden, hidden) for _ in range(layers)])
        self.norms = nn.ModuleList([nn.BatchNorm1d(hidden) for _ in range(layers)])
        self.dropout = dropout
        self.readout = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU(),
                                     nn.Dropout(dropout), nn.Linear(hidden, out_dim))

    def forward(self, x, edge_index, batch, num_graphs):
        h = self.embed(x)
        for conv, norm in zip(self.convs, self.norms):
            h = h + F.dropout(F.relu(norm(conv(h, edge_index))), self.dropout, self.training)
        mean = U.scatter_mean(h, batch, num_graphs)
        mx = torch.full((num_graphs, h.size(1)), float("-inf"), device=h.device)
        mx = mx.scatter_reduce(0, batch.unsqueeze(-1).expand_as(h), h, reduce="amax")
        return self.readout(torch.cat([mean, mx], dim=-1))
