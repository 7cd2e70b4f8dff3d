"""Train HopGCN on a large graph stored as an .npz (x, y, edge_index, split masks)."""
from __future__ import annotations

import argparse
import logging

import numpy as np
import torch

from nodecls import engine
from nodecls.model import HopGCN
from nodecls.utils import CSRGraph

logger = logging.getLogger("nodecls")


def batches(graph, x, y, ids, batch_size, fanouts, rng, shuffle=True):
    ids = rng.permutation(ids) if shuffle else ids
    for i in range(0, len(ids), batch_size):
        seeds = ids[i:i + batch_size]
        nodes, ei, hops = graph.sample(seeds, fanouts, rng)
        yield {"x": torch.from_numpy(x[nodes]), "edge_index": torch.from_numpy(ei),
               "hops": torch.from_numpy(hops), "y": torch.from_numpy(y[seeds]),
               "n_seed": torch.tensor(len(seeds))}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--fanouts", type=int, nargs="+", default=[15, 10])
    p.add_argument("--lr", type=float, default=3e-3)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    data = np.load(args.data)
    x, y = data["x"].astype(np.float32), data["y"].astype(np.int64)
    graph = CSRGraph(data["edge_index"], x.shape[0])
    train_ids, val_ids = np.flatnonzero(data["train_mask"]), np.flatnonzero(data["val_mask"])
    model = HopGCN(x.shape[1], args.hidden, int(y.max()) + 1,
                   max_hops=len(args.fanouts) + 1).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)
    rng = np.random.default_rng(0)

    for epoch in range(args.epochs):
        loss_sum = acc_sum = 0.0
        steps = 0
        for batch in batches(graph, x, y, train_ids, args.batch_size, args.fanouts, rng):
            out = engine.train_step(model, opt, engine.move(batch, device))
            loss_sum += out["loss"].item()
            acc_sum += out["acc"].item()
            steps += 1
        correct = total = 0
        for batch in batches(graph, x, y, val_ids, 4096, args.fanouts, rng, shuffle=False):
            res = engine.eval_step(model, engine.move(batch, device))
            correct += res["correct"]
            total += res["total"]
        logger.info("epoch %d loss %.4f train acc %.3f val acc %.3f", epoch,
                    loss_sum / steps, acc_sum / steps, correct / max(total, 1))


if __name__ == "__main__":
    main()
