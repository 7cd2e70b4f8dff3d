"""Core-set active learning: pick unlabeled samples far from the labeled set.

Each acquisition round re-embeds the unlabeled pool with the current model.
Embedding extraction is a template in ``PoolEmbedder``; concrete embedders
decide where in the network the features are taken from.
"""
import argparse
import logging
import random

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Subset, TensorDataset

logger = logging.getLogger("al.coreset")


class PoolEmbedder:
    def __init__(self, model, batch_size=256, device="cpu"):
        self.model = model
        self.batch_size = batch_size
        self.device = device
        self._feats = None

    def _prepare(self):
        """Hook: set up whatever is needed to capture features."""

    def _finish(self):
        """Hook: undo what ``_prepare`` did."""

    def _collect(self, logits):
        return logits

    @torch.no_grad()
    def embed(self, dataset):
        self.model.eval()
        self._prepare()
        chunks = []
        try:
            for x, _ in DataLoader(dataset, batch_size=self.batch_size):
                logits = self.model(x.to(self.device))
                chunks.append(self._collect(logits).cpu())
        finally:
            self._finish()
        return torch.cat(chunks)


class PenultimateEmbedder(PoolEmbedder):
    def __init__(self, model, layer_name="fc", **kw):
        super().__init__(model, **kw)
        self.layer = dict(model.named_modules())[layer_name]
        self._handle = None

    def _grab(self, module, inputs, output):
        self._feats = inputs[0].flatten(1)

    def _prepare(self):
        self._handle = self.layer.register_forward_hook(self._grab)

    def _finish(self):
        if self._handle is not None:
            self._handle.remove()
            self._handle = None
        self._feats = None

    def _collect(self, logits):
        return self._feats


def greedy_k_center(pool_emb, labeled_emb, budget):
    min_dist = torch.cdist(pool_emb, labeled_emb).min(dim=1).values
    picked = []
    for _ in range(budget):
        idx = int(torch.argmax(min_dist))
        picked.append(idx)
        d_new = torch.cdist(pool_emb, pool_emb[idx:idx + 1]).squeeze(1)
        min_dist = torch.minimum(min_dist, d_new)
    return picked


class SmallNet(nn.Module):
    def __init__(self, d_in=64, n_cls=10):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(d_in, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU())
        self.fc = nn.Linear(64, n_cls)

    def forward(self, x):
        return self.fc(self.features(x))


def train_epochs(model, dataset, epochs=5, lr=1e-3):
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(epochs):
        for x, y in DataLoader(dataset, batch_size=64, shuffle=True):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--init", type=int, default=200)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    X, Y = torch.randn(20000, 64), torch.randint(0, 10, (20000,))
    full = TensorDataset(X, Y)
    labeled = set(random.sample(range(len(full)), args.init))
    model = SmallNet()
    embedder = PenultimateEmbedder(model, layer_name="fc")

    for rnd in range(args.rounds):
        train_epochs(model, Subset(full, sorted(labeled)))
        unlabeled = [i for i in range(len(full)) if i not in labeled]
        pool_emb = embedder.embed(Subset(full, unlabeled))
        lab_emb = embedder.embed(Subset(full, sorted(labeled)))
        chosen = greedy_k_center(pool_emb, lab_emb, args.budget)
        labeled.update(unlabeled[i] for i in chosen)
        logger.info("round %d: labeled=%d", rnd, len(labeled))


if __name__ == "__main__":
    main()
