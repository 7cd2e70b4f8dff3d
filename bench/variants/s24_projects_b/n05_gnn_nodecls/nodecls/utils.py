"""Graph utilities.

Structure-dependent quantities (normalised edge weights) are recomputed for
every sampled subgraph; only small shape-keyed constants are memoised.
"""
from __future__ import annotations

import functools
import logging
import math
from typing import Tuple

import numpy as np
import torch

logger = logging.getLogger(__name__)


def scatter_add(src: torch.Tensor, index: torch.Tensor, dim_size: int) -> torch.Tensor:
    return src.new_zeros((dim_size,) + src.shape[1:]).index_add_(0, index, src)


@functools.lru_cache(maxsize=16)
def sinusoid_table(max_hops: int, dim: int) -> torch.Tensor:
    """Hop-distance encodings, keyed by (max_hops, dim) only."""
    pos = torch.arange(max_hops, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(max_hops, dim)
    table[:, 0::2] = torch.sin(pos * div)
    table[:, 1::2] = torch.cos(pos * div)
    return table


def gcn_norm(edge_index: torch.Tensor, num_nodes: int) -> Tuple[torch.Tensor, torch.Tensor]:
    loops = torch.arange(num_nodes, device=edge_index.device).repeat(2, 1)
    ei = torch.cat([edge_index, loops], dim=1)
    deg = scatter_add(torch.ones(ei.size(1), device=ei.device), ei[1], num_nodes)
    inv = deg.pow(-0.5).masked_fill(deg == 0, 0.0)
    return ei, inv[ei[0]] * inv[ei[1]]


class CSRGraph:
    """Adjacency in CSR form for fast uniform neighbour sampling on the host."""

    def __init__(self, edge_index: np.ndarray, num_nodes: int):
        order = np.argsort(edge_index[0], kind="stable")
        src, dst = edge_index[0][order], edge_index[1][order]
        self.indptr = np.zeros(num_nodes + 1, dtype=np.int64)
        np.add.at(self.indptr, src + 1, 1)
        self.indptr = np.cumsum(self.indptr)
        self.indices = dst
        self.num_nodes = num_nodes

    def sample(self, seeds: np.ndarray, fanouts, rng: np.random.Generator):
        """Return (node ids, local edge_index, hop of each node) for a k-hop sample."""
        nodes = list(seeds)
        hop = {int(n): 0 for n in seeds}
        frontier, edges = seeds, []
        for h, fanout in enumerate(fanouts, start=1):
            nxt = []
            for v in frontier:
                nbrs = self.indices[self.indptr[v]:self.indptr[v + 1]]
                if len(nbrs) > fanout:
                    nbrs = rng.choice(nbrs, fanout, replace=False)
                for u in nbrs:
                    edges.append((u, v))
                    if int(u) not in hop:
                        hop[int(u)] = h
                        nodes.append(u)
                        nxt.append(u)
            frontier = nxt
        local = {int(n): i for i, n in enumerate(nodes)}
        ei = np.array([[local[int(u)] for u, _ in edges], [local[int(v)] for _, v in edges]],
                      dtype=np.int64).reshape(2, -1)
        hops = np.array([hop[int(n)] for n in nodes], dtype=np.int64)
        return np.asarray(nodes, dtype=np.int64), ei, hops
