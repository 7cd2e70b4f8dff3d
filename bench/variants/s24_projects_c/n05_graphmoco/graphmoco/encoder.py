"""GIN encoder and graph-level augmentations (all CPU-side augmentations run in workers)."""
import copy

import torch
import torch.nn as nn
from torch_geometric.nn import GINEConv, global_add_pool
from torch_geometric.utils import dropout_edge, subgraph


class GINEncoder(nn.Module):
    def __init__(self, num_atom_types: int = 120, num_bond_types: int = 6, hidden: int = 300,
                 layers: int = 5, proj_dim: int = 128, dropout: float = 0.1):
        super().__init__()
        self.atom_emb = nn.Embedding(num_atom_types, hidden)
        self.bond_embs = nn.ModuleList(nn.Embedding(num_bond_types, hidden) for _ in range(layers))
        self.convs = nn.ModuleList(
            GINEConv(nn.Sequential(nn.Linear(hidden, 2 * hidden), nn.ReLU(), nn.Linear(2 * hidden, hidden)))
            for _ in range(layers)
        )
        self.norms = nn.ModuleList(nn.BatchNorm1d(hidden) for _ in range(layers))
        self.dropout = nn.Dropout(dropout)
        self.proj = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, proj_dim))

    def embed(self, data) -> torch.Tensor:
        h = self.atom_emb(data.x[:, 0])
        for conv, bond, norm in zip(self.convs, self.bond_embs, self.norms):
            h = self.dropout(torch.relu(norm(conv(h, data.edge_index, bond(data.edge_attr[:, 0])))))
        return global_add_pool(h, data.batch)

    def forward(self, data) -> torch.Tensor:
        return nn.functional.normalize(self.proj(self.embed(data)), dim=-1)


def make_key_encoder(encoder: GINEncoder) -> GINEncoder:
    key = copy.deepcopy(encoder)
    for p in key.parameters():
        p.requires_grad_(False)
    return key


class TwoViewAugment:
    """torch_geometric transform returning two stochastic views of one molecule."""

    def __init__(self, edge_drop: float = 0.2, node_drop: float = 0.1, mask_rate: float = 0.15, mask_token: int = 119):
        self.edge_drop, self.node_drop, self.mask_rate, self.mask_token = edge_drop, node_drop, mask_rate, mask_token

    def _view(self, data):
        d = data.clone()
        keep = torch.rand(d.num_nodes) >= self.node_drop
        if keep.sum() >= 2:
            d.edge_index, d.edge_attr = subgraph(keep, d.edge_index, d.edge_attr, relabel_nodes=True,
                                                 num_nodes=d.num_nodes)
            d.x = d.x[keep]
        d.edge_index, edge_mask = dropout_edge(d.edge_index, p=self.edge_drop)
        d.edge_attr = d.edge_attr[edge_mask]
        m = torch.rand(d.x.shape[0]) < self.mask_rate
        d.x = d.x.clone()
        d.x[m, 0] = self.mask_token
        return d

    def __call__(self, data):
        return self._view(data), self._view(data)
