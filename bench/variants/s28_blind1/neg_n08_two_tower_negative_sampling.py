"""Train a two-tower retrieval model on implicit feedback with sampled negatives."""
from __future__ import annotations

import argparse
import logging
from typing import Dict, List, Tuple

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger("two_tower")


class InteractionDataset(Dataset):
    def __init__(self, df: pd.DataFrame, history_len: int = 20):
        df = df.sort_values(["user_id", "ts"])
        self.users = df["user_id"].to_numpy(np.int64)
        self.items = df["item_id"].to_numpy(np.int64)
        hist = df.groupby("user_id")["item_id"].transform(
            lambda s: [s.iloc[max(0, i - history_len):i].tolist() for i in range(len(s))])
        self.history = hist.tolist()
        self.history_len = history_len

    def __len__(self) -> int:
        return len(self.users)

    def __getitem__(self, i: int) -> Tuple[int, int, np.ndarray]:
        h = np.zeros(self.history_len, dtype=np.int64)
        past = self.history[i][-self.history_len:]
        if past:
            h[-len(past):] = past
        return int(self.users[i]), int(self.items[i]), h


class NegativeSamplingCollator:
    def __init__(self, num_items: int, num_negatives: int):
        self.num_items = num_items
        self.num_negatives = num_negatives

    def __call__(self, samples: List[Tuple[int, int, np.ndarray]]) -> Dict[str, torch.Tensor]:
        users, items, hist = zip(*samples)
        batch = {
            "user": torch.as_tensor(users, dtype=torch.long),
            "item": torch.as_tensor(items, dtype=torch.long),
            "history": torch.as_tensor(np.stack(hist), dtype=torch.long),
            "negatives": torch.randint(1, self.num_items, (len(samples), self.num_negatives)),
        }
        return batch


class TwoTower(nn.Module):
    def __init__(self, num_users: int, num_items: int, dim: int = 64):
        super().__init__()
        self.user_emb = nn.Embedding(num_users, dim)
        self.item_emb = nn.Embedding(num_items, dim, padding_idx=0)
        self.user_mlp = nn.Sequential(nn.Linear(2 * dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))
        self.item_mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def user_tower(self, user: torch.Tensor, history: torch.Tensor) -> torch.Tensor:
        mask = (history > 0).float().unsqueeze(-1)
        hist = (self.item_emb(history) * mask).sum(1) / mask.sum(1).clamp_min(1.0)
        return F.normalize(self.user_mlp(torch.cat([self.user_emb(user), hist], dim=-1)), dim=-1)

    def item_tower(self, item: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.item_mlp(self.item_emb(item)), dim=-1)

    def loss(self, batch: Dict[str, torch.Tensor], temperature: float = 0.05) -> torch.Tensor:
        u = self.user_tower(batch["user"], batch["history"])            # [B, D]
        pos = self.item_tower(batch["item"])                             # [B, D]
        neg = self.item_tower(batch["negatives"])                        # [B, N, D]
        in_batch = u @ pos.T                                             # [B, B]
        sampled = torch.einsum("bd,bnd->bn", u, neg)                     # [B, N]
        logits = torch.cat([in_batch, sampled], dim=1) / temperature
        labels = torch.arange(u.shape[0], device=u.device)
        return F.cross_entropy(logits, labels)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--num-negatives", type=int, default=64)
    p.add_argument("--num-workers", type=int, default=8)
    p.add_argument("--device", default="cuda")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)

    device = torch.device(args.device)
    df = pd.read_parquet(args.data)
    num_users, num_items = int(df.user_id.max()) + 1, int(df.item_id.max()) + 1
    ds = InteractionDataset(df)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=args.num_workers,
                        collate_fn=NegativeSamplingCollator(num_items, args.num_negatives),
                        persistent_workers=args.num_workers > 0, drop_last=True, pin_memory=True)
    model = TwoTower(num_users, num_items).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        total, n = 0.0, 0
        for batch in loader:
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            loss = model.loss(batch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total, n = total + loss.item(), n + 1
        logger.info("epoch %d loss %.4f", epoch, total / max(n, 1))


if __name__ == "__main__":
    main()
