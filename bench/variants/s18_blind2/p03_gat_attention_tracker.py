"""Node classification with a dense GAT on citation graphs.

The attention inspector is attached once via forward hooks so that we can
compute attention entropy per head for the paper's analysis section.
"""
import argparse
import json
import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class DenseGATLayer(nn.Module):
    def __init__(self, in_dim, out_dim, heads=8, dropout=0.6, concat=True):
        super().__init__()
        self.heads, self.out_dim, self.concat = heads, out_dim, concat
        self.W = nn.Linear(in_dim, heads * out_dim, bias=False)
        self.a_src = nn.Parameter(torch.empty(heads, out_dim))
        self.a_dst = nn.Parameter(torch.empty(heads, out_dim))
        nn.init.xavier_uniform_(self.a_src)
        nn.init.xavier_uniform_(self.a_dst)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, adj):
        N = x.size(0)
        h = self.W(x).view(N, self.heads, self.out_dim)
        e_src = (h * self.a_src).sum(-1)
        e_dst = (h * self.a_dst).sum(-1)
        e = F.leaky_relu(e_src.unsqueeze(1) + e_dst.unsqueeze(0), 0.2)  # N x N x H
        e = e.masked_fill(adj.unsqueeze(-1) == 0, float("-inf"))
        alpha = self.drop(torch.softmax(e, dim=1))
        out = torch.einsum("ijh,jhd->ihd", alpha, h)
        out = out.reshape(N, -1) if self.concat else out.mean(1)
        return out, alpha


class GAT(nn.Module):
    def __init__(self, in_dim, hid, n_cls, heads=8):
        super().__init__()
        self.l1 = DenseGATLayer(in_dim, hid, heads)
        self.l2 = DenseGATLayer(hid * heads, n_cls, 1, concat=False)

    def forward(self, x, adj):
        x = F.dropout(x, 0.6, self.training)
        x, _ = self.l1(x, adj)
        x = F.dropout(F.elu(x), 0.6, self.training)
        x, _ = self.l2(x, adj)
        return x


class AttentionInspector:
    def __init__(self):
        self.maps = {}
        self.handles = []

    def attach(self, model):
        for name, mod in model.named_modules():
            if isinstance(mod, DenseGATLayer):
                self.maps[name] = []
                self.handles.append(mod.register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def hook(module, inputs, output):
            self._store(name, output[1])
        return hook

    def _store(self, name, alpha):
        self.maps[name].append(alpha)  # leak

    def entropy(self):
        res = {}
        for name, seq in self.maps.items():
            if seq:
                a = seq[-1].detach().clamp_min(1e-12)
                res[name] = float(-(a * a.log()).sum(1).mean())
        return res


def load_graph(path):
    blob = np.load(path)
    x = torch.from_numpy(blob["x"]).float()
    adj = torch.from_numpy(blob["adj"]).float()
    adj = adj + torch.eye(adj.size(0))
    y = torch.from_numpy(blob["y"]).long()
    masks = {k: torch.from_numpy(blob[k]).bool() for k in ("train_mask", "val_mask", "test_mask")}
    return x, adj, y, masks


@torch.no_grad()
def evaluate(model, x, adj, y, mask):
    model.eval()
    pred = model(x, adj).argmax(-1)
    return (pred[mask] == y[mask]).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", default="data/cora.npz")
    ap.add_argument("--epochs", type=int, default=1000)
    ap.add_argument("--hidden", type=int, default=8)
    ap.add_argument("--lr", type=float, default=5e-3)
    ap.add_argument("--report", default="attn_report.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    x, adj, y, masks = load_graph(args.graph)
    x, adj, y = x.to(dev), adj.to(dev), y.to(dev)
    masks = {k: v.to(dev) for k, v in masks.items()}

    model = GAT(x.size(1), args.hidden, int(y.max()) + 1).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)
    inspector = AttentionInspector()
    inspector.attach(model)

    best, report = 0.0, []
    for epoch in range(args.epochs):
        model.train()
        opt.zero_grad()
        out = model(x, adj)
        loss = F.cross_entropy(out[masks["train_mask"]], y[masks["train_mask"]])
        loss.backward()
        opt.step()
        val = evaluate(model, x, adj, y, masks["val_mask"])
        if epoch % 20 == 0:
            ent = inspector.entropy()
            report.append({"epoch": epoch, "loss": loss.item(), "val": val, **ent})
            logger.info("epoch %d loss %.4f val %.4f", epoch, loss.item(), val)
        best = max(best, val)

    with open(args.report, "w") as f:
        json.dump(report, f, indent=1)
    logger.info("best val %.4f", best)


if __name__ == "__main__":
    main()
