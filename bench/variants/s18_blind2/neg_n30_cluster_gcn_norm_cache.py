"""Cluster-GCN style training on ogbn-products partitions.

Graph utilities are kept in this module so that the sweep scripts can import them.
"""
import argparse
import functools
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def sym_norm_adj(edge_index, num_nodes):
    """D^-1/2 (A + I) D^-1/2 as a sparse COO tensor (edge_index is 2 x E)."""
    loops = torch.arange(num_nodes, device=edge_index.device)
    ei = torch.cat([edge_index, torch.stack([loops, loops])], dim=1)
    w = torch.ones(ei.size(1), device=edge_index.device)
    deg = torch.zeros(num_nodes, device=edge_index.device).scatter_add_(0, ei[0], w)
    dinv = deg.pow(-0.5)
    dinv[torch.isinf(dinv)] = 0
    vals = dinv[ei[0]] * w * dinv[ei[1]]
    return torch.sparse_coo_tensor(ei, vals, (num_nodes, num_nodes)).coalesce()


class GCNLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, adj):
        return torch.sparse.mm(adj, self.lin(x))


class GCN(nn.Module):
    def __init__(self, d_in, hidden, n_cls, layers=3, dropout=0.5):
        super().__init__()
        dims = [d_in] + [hidden] * (layers - 1) + [n_cls]
        self.layers = nn.ModuleList(GCNLayer(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.norms = nn.ModuleList(nn.BatchNorm1d(hidden) for _ in range(layers - 1))
        self.dropout = dropout

    def forward(self, x, edge_index):
        adj = sym_norm_adj(edge_index, x.size(0))
        for i, layer in enumerate(self.layers):
            x = layer(x, adj)
            if i < len(self.layers) - 1:
                x = F.dropout(F.relu(self.norms[i](x)), self.dropout, self.training)
        return x


def induced_subgraph(edge_index, nodes, num_nodes):
    mask = torch.zeros(num_nodes, dtype=torch.bool)
    mask[nodes] = True
    keep = mask[edge_index[0]] & mask[edge_index[1]]
    remap = torch.full((num_nodes,), -1, dtype=torch.long)
    remap[nodes] = torch.arange(nodes.numel())
    return remap[edge_index[:, keep]]


@functools.lru_cache(maxsize=2)
def load_partitions(path: str):
    """METIS partitions are expensive to deserialize; sweep scripts call this repeatedly."""
    return tuple(torch.load(path))


def cluster_batches(parts, clusters_per_batch):
    order = torch.randperm(len(parts))
    for i in range(0, len(parts), clusters_per_batch):
        yield torch.cat([parts[j] for j in order[i:i + clusters_per_batch].tolist()])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", default="data/ogbn_products.pt")
    ap.add_argument("--parts", default="data/ogbn_products_parts1500.pt")
    ap.add_argument("--clusters-per-batch", type=int, default=20)
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--hidden", type=int, default=256)
    args = ap.parse_args()

    g = torch.load(args.graph)  # dict: x, y, edge_index, train_mask
    parts = load_partitions(args.parts)  # tuple of LongTensor node ids
    dev = torch.device("cuda")
    N = g["x"].size(0)
    model = GCN(g["x"].size(1), args.hidden, int(g["y"].max()) + 1).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    for epoch in range(args.epochs):
        model.train()
        t0, tot, cnt = time.time(), 0.0, 0
        for nodes in cluster_batches(parts, args.clusters_per_batch):
            sub_ei = induced_subgraph(g["edge_index"], nodes, N).to(dev)
            x, y = g["x"][nodes].to(dev), g["y"][nodes].to(dev)
            m = g["train_mask"][nodes].to(dev)
            if m.sum() == 0:
                continue
            out = model(x, sub_ei)
            loss = F.cross_entropy(out[m], y[m])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item() * int(m.sum())
            cnt += int(m.sum())
        print(f"epoch {epoch:03d} loss {tot / max(cnt, 1):.4f} ({time.time() - t0:.1f}s)")


if __name__ == "__main__":
    main()
