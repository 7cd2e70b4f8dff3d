import json
from functools import cache

import torch
import torch.nn as nn
import torch.nn.functional as F


@cache
def load_atom_vocab(path: str) -> dict:
    """Element symbol -> index mapping, read once per process."""
    with open(path) as f:
        return {sym: i for i, sym in enumerate(json.load(f))}


def sym_normalize(adj: torch.Tensor) -> torch.Tensor:
    """D^-1/2 (A + I) D^-1/2 for a dense adjacency matrix."""
    a = adj + torch.eye(adj.size(0), device=adj.device)
    deg = a.sum(1)
    d_inv_sqrt = deg.pow(-0.5)
    d_inv_sqrt[torch.isinf(d_inv_sqrt)] = 0
    return d_inv_sqrt[:, None] * a * d_inv_sqrt[None, :]


class DenseGCNLayer(nn.Module):
    def __init__(self, fin, fout):
        super().__init__()
        self.lin = nn.Linear(fin, fout)

    def forward(self, x, adj_norm):
        return adj_norm @ self.lin(x)


class GraphClassifier(nn.Module):
    def __init__(self, vocab_path, hid, n_cls):
        super().__init__()
        vocab = load_atom_vocab(vocab_path)
        self.atom_emb = nn.Embedding(len(vocab), hid)
        self.g1 = DenseGCNLayer(hid, hid)
        self.g2 = DenseGCNLayer(hid, hid)
        self.cls = nn.Linear(hid, n_cls)

    def forward(self, atoms, adj):
        a = sym_normalize(adj)
        h = F.relu(self.g1(self.atom_emb(atoms), a))
        h = F.relu(self.g2(h, a))
        return self.cls(h.mean(0, keepdim=True))


def train(model, graphs, epochs=100, device="cuda"):
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    for ep in range(epochs):
        total = 0.0
        for atoms, adj, y in graphs:
            atoms, adj, y = atoms.to(device), adj.to(device), y.to(device)
            loss = F.cross_entropy(model(atoms, adj), y.view(1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        print(f"epoch {ep}: {total / len(graphs):.4f}")
