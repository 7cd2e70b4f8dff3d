"""Two-layer GCN with hop-distance encodings."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from nodecls import utils


class GCNLayer(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, ei, w):
        h = self.lin(x)
        return utils.scatter_add(h[ei[0]] * w.unsqueeze(-1), ei[1], x.size(0))


class HopGCN(nn.Module):
    def __init__(self, d_in: int, hidden: int, n_classes: int, max_hops: int = 3,
                 dropout: float = 0.5):
        super().__init__()
        self.max_hops = max_hops
        self.hidden = hidden
        self.inp = nn.Linear(d_in, hidden)
        self.conv1 = GCNLayer(hidden, hidden)
        self.conv2 = GCNLayer(hidden, n_classes)
        self.dropout = dropout
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for lin in (self.inp, self.conv1.lin, self.conv2.lin):
            nn.init.xavier_uniform_(lin.weight)
            nn.init.zeros_(lin.bias)

    def extra_repr(self) -> str:
        return f"max_hops={self.max_hops}, dropout={self.dropout}"

    def forward(self, x, edge_index, hops):
        ei, w = utils.gcn_norm(edge_index, x.size(0))
        pe = utils.sinusoid_table(self.max_hops, self.hidden).to(x.device)
        h = self.inp(x) + pe[hops.clamp(max=self.max_hops - 1)]
        h = F.dropout(F.relu(self.conv1(h, ei, w)), self.dropout, self.training)
        return self.conv2(h, ei, w)
