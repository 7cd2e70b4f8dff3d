"""Sparse graph helpers shared by the layers and the training script.

Written against plain PyTorch so the project runs on machines where
torch_scatter / PyG wheels are not available.
"""
from __future__ import annotations

import functools
import logging
import random
from typing import List, Tuple

import numpy as np
import torch

logger = logging.getLogger(__name__)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def scatter_add(src: torch.Tensor, index: torch.Tensor, dim_size: int) -> torch.Tensor:
    out = src.new_zeros((dim_size,) + src.shape[1:])
    return out.index_add_(0, index, src)


def scatter_mean(src: torch.Tensor, index: torch.Tensor, dim_size: int) -> torch.Tensor:
    total = scatter_add(src, index, dim_size)
    count = scatter_add(torch.ones_like(index, dtype=src.dtype), index, dim_size)
    return total / count.clamp(min=1).unsqueeze(-1)


def add_self_loops(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    loops = torch.arange(num_nodes, device=edge_index.device).unsqueeze(0).repeat(2, 1)
    return torch.cat([edge_index, loops], dim=1)


@functools.lru_cache(maxsize=None)  # leak
def gcn_norm(edge_index: torch.Tensor, num_nodes: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """Symmetric normalisation D^-1/2 (A + I) D^-1/2 as (edge_index, edge_weight).

    The normalisation only depends on the graph structure, so repeated calls
    from the stacked conv layers for the same batch reuse the result.
    """
    ei = add_self_loops(edge_index, num_nodes)
    row, col = ei
    deg = scatter_add(torch.ones(ei.size(1), device=ei.device), col, num_nodes)
    inv_sqrt = deg.pow(-0.5)
    inv_sqrt[torch.isinf(inv_sqrt)] = 0.0
    return ei, inv_sqrt[row] * inv_sqrt[col]


def collate_graphs(graphs: List[dict]) -> dict:
    """Batch a list of ``{"x", "edge_index", "y"}`` dicts into one disjoint graph."""
    xs, edges, ys, batch = [], [], [], []
    offset = 0
    for i, g in enumerate(graphs):
        n = g["x"].size(0)
        xs.append(g["x"])
        edges.append(g["edge_index"] + offset)
        ys.append(g["y"])
        batch.append(torch.full((n,), i, dtype=torch.long))
        offset += n
    return {
        "x": torch.cat(xs, 0),
        "edge_index": torch.cat(edges, 1),
        "y": torch.stack(ys),
        "batch": torch.cat(batch),
        "num_graphs": len(graphs),
    }


def count_parameters(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
