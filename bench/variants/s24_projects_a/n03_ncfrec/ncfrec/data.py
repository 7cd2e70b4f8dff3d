"""MovieLens-1M implicit feedback with leave-one-out split and negative sampling."""
import logging
from collections import defaultdict

import numpy as np
import torch
from torch.utils.data import Dataset

log = logging.getLogger(__name__)


def load_ratings(path: str):
    users, items, ts = [], [], []
    bad_lines = 0
    with open(path, encoding="latin-1") as f:
        for line in f:
            try:
                u, i, _, t = line.strip().split("::")
            except ValueError as err:
                bad_lines += 1
                log.debug("skipping malformed line: %s", err)
                continue
            users.append(int(u) - 1)
            items.append(int(i) - 1)
            ts.append(int(t))
    if bad_lines:
        log.warning("skipped %d malformed lines", bad_lines)
    return np.array(users), np.array(items), np.array(ts)


def leave_one_out(users, items, ts):
    by_user = defaultdict(list)
    for u, i, t in zip(users, items, ts):
        by_user[u].append((t, i))
    train, test = [], {}
    for u, seq in by_user.items():
        seq.sort()
        test[u] = seq[-1][1]
        train += [(u, i) for _, i in seq[:-1]]
    return train, test


class NegativeSampler(Dataset):
    def __init__(self, train_pairs, n_items: int, num_neg: int = 4, seed: int = 0):
        self.pairs = np.asarray(train_pairs, dtype=np.int64)
        self.n_items = n_items
        self.num_neg = num_neg
        self.seen = defaultdict(set)
        for u, i in train_pairs:
            self.seen[u].add(i)
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.pairs) * (1 + self.num_neg)

    def __getitem__(self, idx):
        u, i = self.pairs[idx // (1 + self.num_neg)]
        if idx % (1 + self.num_neg) == 0:
            return torch.tensor(u), torch.tensor(i), torch.tensor(1.0)
        j = int(self.rng.integers(self.n_items))
        while j in self.seen[u]:
            j = int(self.rng.integers(self.n_items))
        return torch.tensor(u), torch.tensor(j), torch.tensor(0.0)
