"""Entry point: python -m tworec.main --interactions data/clicks.parquet"""
import argparse
import logging

import numpy as np
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset

from tworec.hooks import CheckpointHook, EmbeddingStatsHook, IterTimerHook, LoggerHook
from tworec.models import TwoTowerModel, recall_at_k
from tworec.runner import Runner

MAX_FEATS = 8


class InteractionDataset(Dataset):
    """(user, item) positive pairs plus padded categorical side features."""

    def __init__(self, df: pd.DataFrame, item_counts: np.ndarray):
        self.users = df["user_id"].to_numpy()
        self.items = df["item_id"].to_numpy()
        self.user_feats = df["user_feats"].to_list()
        self.item_feats = df["item_feats"].to_list()
        prob = item_counts / item_counts.sum()
        self.item_logq = np.log(prob + 1e-12).astype(np.float32)

    def __len__(self):
        return len(self.users)

    @staticmethod
    def _pad(feats):
        arr = np.zeros(MAX_FEATS, dtype=np.int64)
        arr[: min(len(feats), MAX_FEATS)] = feats[:MAX_FEATS]
        return torch.from_numpy(arr)

    def __getitem__(self, idx):
        item = int(self.items[idx])
        return {
            "user_id": torch.tensor(int(self.users[idx])),
            "item_id": torch.tensor(item),
            "user_feats": self._pad(self.user_feats[idx]),
            "item_feats": self._pad(self.item_feats[idx]),
            "item_logq": torch.tensor(self.item_logq[item]),
        }


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--interactions", required=True)
    p.add_argument("--val-frac", type=float, default=0.02)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=4096)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--work-dir", default="work_dirs/two_tower")
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    df = pd.read_parquet(args.interactions).sample(frac=1.0, random_state=0)
    n_val = int(len(df) * args.val_frac)
    num_users, num_items = int(df.user_id.max()) + 1, int(df.item_id.max()) + 1
    counts = np.bincount(df.item_id.to_numpy(), minlength=num_items).astype(np.float64)

    train_ds = InteractionDataset(df.iloc[n_val:], counts)
    val_ds = InteractionDataset(df.iloc[:n_val], counts)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=8, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=1024, num_workers=2)

    model = TwoTowerModel(num_users, num_items, num_user_feats=5000, num_item_feats=20000)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-5)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    hooks = [
        IterTimerHook(),
        LoggerHook(interval=100),
        EmbeddingStatsHook(collapse_threshold=0.02),
        CheckpointHook(interval=1, out_dir=args.work_dir),
    ]
    runner = Runner(model, train_dl, optimizer, max_epochs=args.epochs, hooks=hooks,
                    param_scheduler=scheduler, val_dataloader=val_dl, val_fn=recall_at_k,
                    device="cuda" if torch.cuda.is_available() else "cpu")
    runner.train()


if __name__ == "__main__":
    main()
