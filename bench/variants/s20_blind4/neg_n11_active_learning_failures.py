"""Pool-based active learning loop (BALD acquisition with MC dropout).

Every round: score the unlabeled pool, move the top-k most informative samples
into the labeled set, retrain from scratch.  Some pool shards come from a
flaky preprocessing job, so scoring is made robust to bad shards.
"""
import argparse
import logging
import math
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

LOG = logging.getLogger("al")


def mc_bald(net, x, passes=10):
    """Mutual information between predictions and weights (MC dropout estimate)."""
    net.train()  # keep dropout on
    probs = torch.stack([F.softmax(net(x), dim=-1) for _ in range(passes)])  # T x B x C
    mean = probs.mean(0)
    entropy_mean = -(mean * mean.clamp_min(1e-12).log()).sum(-1)
    mean_entropy = -(probs * probs.clamp_min(1e-12).log()).sum(-1).mean(0)
    return entropy_mean - mean_entropy


def score_shard(net, shard, passes):
    """Returns (scores, None) on success and (None, reason) if the shard is unusable."""
    try:
        with torch.no_grad():
            if not torch.isfinite(shard).all():
                raise ValueError("non-finite values in shard")
            return mc_bald(net, shard, passes), None
    except (ValueError, RuntimeError) as err:
        return None, f"{type(err).__name__}: {err}"


class ActiveLearner:
    def __init__(self, net_fn, pool_x, pool_y, seed_size=100, shard_size=512, passes=10):
        self.net_fn = net_fn
        self.pool_x, self.pool_y = pool_x, pool_y
        idx = list(range(len(pool_x)))
        random.shuffle(idx)
        self.labeled = set(idx[:seed_size])
        self.shard_size = shard_size
        self.passes = passes
        self.bad_shards = []

    def unlabeled(self):
        return [i for i in range(len(self.pool_x)) if i not in self.labeled]

    def train(self, epochs=20, lr=1e-3):
        net = self.net_fn()
        opt = torch.optim.Adam(net.parameters(), lr=lr)
        idx = torch.tensor(sorted(self.labeled))
        for _ in range(epochs):
            perm = idx[torch.randperm(len(idx))]
            for b in perm.split(64):
                opt.zero_grad()
                F.cross_entropy(net(self.pool_x[b]), self.pool_y[b]).backward()
                opt.step()
        return net

    def acquire(self, net, k):
        cand = self.unlabeled()
        all_scores, all_idx = [], []
        self.bad_shards = []  # per round
        for start in range(0, len(cand), self.shard_size):
            ids = cand[start:start + self.shard_size]
            scores, reason = score_shard(net, self.pool_x[ids], self.passes)
            if reason is not None:
                self.bad_shards.append((start, reason))
                continue
            all_scores.append(scores.cpu().numpy())
            all_idx.extend(ids)
        if not all_scores:
            return []
        s = np.concatenate(all_scores)
        top = np.argsort(-s)[:k]
        picked = [all_idx[j] for j in top]
        self.labeled.update(picked)
        return picked

    def evaluate(self, net, x, y):
        net.eval()
        with torch.no_grad():
            return (net(x).argmax(-1) == y).float().mean().item()


def make_net(d_in=784, n_cls=10, p=0.3):
    return nn.Sequential(nn.Linear(d_in, 256), nn.ReLU(), nn.Dropout(p), nn.Linear(256, n_cls))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--acquire", type=int, default=50)
    ap.add_argument("--pool", type=int, default=20000)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    x = torch.randn(args.pool, 784)
    x[torch.rand(args.pool) < 0.002] = float("nan")   # corrupted rows from the upstream job
    y = torch.randint(0, 10, (args.pool,))
    tx, ty = torch.randn(2000, 784), torch.randint(0, 10, (2000,))
    learner = ActiveLearner(make_net, x, y)
    for r in range(args.rounds):
        net = learner.train()
        acc = learner.evaluate(net, tx, ty)
        picked = learner.acquire(net, args.acquire)
        LOG.info("round %d labeled=%d acc=%.3f picked=%d bad_shards=%d",
                 r, len(learner.labeled), acc, len(picked), len(learner.bad_shards))


if __name__ == "__main__":
    main()
