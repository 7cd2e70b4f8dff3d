"""Plain GCN (Kipf & Welling) with optional residual connections."""
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import hooks


def normalized_adjacency(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Symmetric normalisation D^-1/2 (A + I) D^-1/2 as a sparse COO tensor."""
    loops = torch.arange(num_nodes, device=edge_index.device)
    ei = torch.cat([edge_index, torch.stack([loops, loops])], dim=1)
    deg = torch.zeros(num_nodes, device=ei.device).scatter_add_(
        0, ei[0], torch.ones(ei.shape[1], device=ei.device))
    dinv = deg.pow(-0.5)
    vals = dinv[ei[0]] * dinv[ei[1]]
    return torch.sparse_coo_tensor(ei, vals, (num_nodes, num_nodes)).coalesce()


class GCNLayer(nn.Module):
    def __init__(self, in_dim: int, out_dim: int):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        return torch.sparse.mm(adj, self.lin(x))


class GCN(nn.Module):
    def __init__(self, in_dim: int, hidden: int, out_dim: int, num_layers: int = 2,
                 dropout: float = 0.5, residual: bool = False):
        super().__init__()
        dims = [in_dim] + [hidden] * (num_layers - 1) + [out_dim]
        self.layers = nn.ModuleList(GCNLayer(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.dropout = dropout
        self.residual = residual
        self._handles = []

    def attach_probes(self, recorder: Optional[hooks.ActivationRecorder] = None):
        recorder = recorder or hooks.ActivationRecorder()
        for i, layer in enumerate(self.layers):
            self._handles.append(layer.register_forward_hook(recorder.hook_for(f"layer{i}")))
        return recorder

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            x = F.dropout(x, self.dropout, self.training)
            h = layer(x, adj)
            if i < len(self.layers) - 1:
                h = F.relu(h)
                if self.residual and h.shape == x.shape:
                    h = h + x
            x = h
        return x
