"""Two-tower retrieval model for implicit-feedback recommendation.

Usage:
    python p05_two_tower_user_cache.py --interactions data/ml1m.parquet
"""
import argparse
import logging
import math

import pandas as pd
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

LOG = logging.getLogger("two_tower")


class InteractionDataset(Dataset):
    def __init__(self, df, n_items, n_hist=20):
        self.users = df["user_idx"].values
        self.items = df["item_idx"].values
        self.hist = df["hist"].values
        self.n_items = n_items
        self.n_hist = n_hist

    def __len__(self):
        return len(self.users)

    def __getitem__(self, i):
        h = list(self.hist[i])[-self.n_hist:]
        h = [0] * (self.n_hist - len(h)) + h
        return int(self.users[i]), torch.tensor(h, dtype=torch.long), int(self.items[i])


class Tower(nn.Module):
    def __init__(self, n_emb, dim, hidden=256):
        super().__init__()
        self.emb = nn.Embedding(n_emb, dim, padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim))

    def forward(self, ids):
        e = self.emb(ids)
        if e.dim() == 3:
            mask = (ids != 0).unsqueeze(-1).float()
            e = (e * mask).sum(1) / mask.sum(1).clamp_min(1.0)
        return F.normalize(self.mlp(e), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, n_users, n_items, dim=64, temperature=0.05):
        super().__init__()
        self.user_tower = Tower(n_users, dim)
        self.hist_tower = Tower(n_items, dim)
        self.item_tower = Tower(n_items, dim)
        self.temperature = temperature
        self._user_repr = {}

    def encode_user(self, user_ids, hist):
        key = tuple(user_ids.tolist())
        if key in self._user_repr:
            return self._user_repr[key]
        u = self.user_tower(user_ids) + self.hist_tower(hist)
        self._user_repr[key] = u  # leak
        return u

    def forward(self, user_ids, hist, item_ids):
        u = self.encode_user(user_ids, hist)
        v = self.item_tower(item_ids)
        return u @ v.t() / self.temperature


def in_batch_softmax_loss(logits, item_ids, log_q=None):
    if log_q is not None:
        logits = logits - log_q[item_ids].unsqueeze(0)
    labels = torch.arange(logits.size(0), device=logits.device)
    return F.cross_entropy(logits, labels)


def item_log_q(df, n_items, device):
    counts = torch.bincount(torch.as_tensor(df["item_idx"].values), minlength=n_items).float() + 1.0
    return (counts / counts.sum()).log().to(device)


def run(args):
    df = pd.read_parquet(args.interactions)
    n_users, n_items = int(df.user_idx.max()) + 1, int(df.item_idx.max()) + 1
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(InteractionDataset(df, n_items), batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, drop_last=True)
    model = TwoTower(n_users, n_items, dim=args.dim).to(dev)
    opt = torch.optim.Adagrad(model.parameters(), lr=args.lr)
    logq = item_log_q(df, n_items, dev)

    for epoch in range(args.epochs):
        model.train()
        run_loss, n = 0.0, 0
        for uid, hist, iid in loader:
            uid, hist, iid = uid.to(dev), hist.to(dev), iid.to(dev)
            logits = model(uid, hist, iid)
            loss = in_batch_softmax_loss(logits, iid, logq)
            opt.zero_grad()
            loss.backward()
            opt.step()
            run_loss += loss.item()
            n += 1
        LOG.info("epoch %d loss %.4f ppl %.1f", epoch, run_loss / n, math.exp(run_loss / n))
    torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    p = argparse.ArgumentParser()
    p.add_argument("--interactions", required=True)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--out", default="two_tower.pt")
    run(p.parse_args())
