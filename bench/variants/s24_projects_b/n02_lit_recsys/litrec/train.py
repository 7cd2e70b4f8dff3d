"""Train NeuMF/BPR on a MovieLens-style ratings CSV (user,item,rating,timestamp)."""
from __future__ import annotations

import argparse

import lightning.pytorch as pl
import numpy as np
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset

from litrec.module import BPRModule


class TripletDataset(Dataset):
    """(user, positive item, uniformly sampled negative item) triplets."""

    def __init__(self, interactions: pd.DataFrame, n_items: int):
        self.users = interactions["user"].to_numpy()
        self.items = interactions["item"].to_numpy()
        self.n_items = n_items
        self.seen = interactions.groupby("user")["item"].apply(set).to_dict()

    def __len__(self):
        return len(self.users)

    def __getitem__(self, idx):
        u = self.users[idx]
        neg = np.random.randint(self.n_items)
        while neg in self.seen[u]:
            neg = np.random.randint(self.n_items)
        return torch.tensor(u), torch.tensor(self.items[idx]), torch.tensor(neg)


class LeaveOneOut(Dataset):
    def __init__(self, held_out: pd.DataFrame, seen: dict, n_items: int, num_neg: int = 99):
        rng = np.random.default_rng(0)
        self.rows = []
        for u, i in zip(held_out["user"], held_out["item"]):
            cand = rng.choice(n_items, size=num_neg * 2, replace=False)
            negs = [c for c in cand if c not in seen.get(u, ()) and c != i][:num_neg]
            self.rows.append((u, i, negs))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        u, i, negs = self.rows[idx]
        return torch.tensor(u), torch.tensor(i), torch.tensor(negs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ratings", required=True)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=2048)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--workers", type=int, default=4)
    args = p.parse_args()

    df = pd.read_csv(args.ratings)
    df["user"] = df["user"].astype("category").cat.codes
    df["item"] = df["item"].astype("category").cat.codes
    df = df.sort_values("timestamp")
    held = df.groupby("user").tail(1)
    train = df.drop(held.index)
    n_users, n_items = df["user"].max() + 1, df["item"].max() + 1

    train_ds = TripletDataset(train, n_items)
    val_ds = LeaveOneOut(held, train_ds.seen, n_items)
    module = BPRModule(n_users, n_items, dim=args.dim)
    trainer = pl.Trainer(max_epochs=args.epochs, accelerator="auto", log_every_n_steps=50)
    trainer.fit(module,
                DataLoader(train_ds, args.batch_size, shuffle=True, num_workers=args.workers),
                DataLoader(val_ds, 1024, num_workers=args.workers))


if __name__ == "__main__":
    main()
