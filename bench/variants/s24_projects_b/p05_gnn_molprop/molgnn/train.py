"""Train MolGCN on a pre-featurised dataset saved as a list of graph dicts.

    python -m molgnn.train --data esol_graphs.pt --task regression
"""
from __future__ import annotations

import argparse
import logging
import math

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, random_split

from molgnn.model import MolGCN
from molgnn.utils import collate_graphs, count_parameters, seed_everything

logger = logging.getLogger("molgnn")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--task", choices=["regression", "classification"], default="regression")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def to_device(batch, device):
    return {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}


def compute_loss(pred, y, task):
    if task == "regression":
        return F.mse_loss(pred.squeeze(-1), y.float())
    return F.binary_cross_entropy_with_logits(pred.squeeze(-1), y.float())


@torch.no_grad()
def evaluate(model, loader, device, task):
    model.eval()
    total, n = 0.0, 0
    for batch in loader:
        batch = to_device(batch, device)
        pred = model(batch["x"], batch["edge_index"], batch["batch"], batch["num_graphs"])
        total += compute_loss(pred, batch["y"], task).item() * batch["num_graphs"]
        n += batch["num_graphs"]
    return total / max(n, 1)


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    seed_everything(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    graphs = torch.load(args.data)
    n_val = n_test = len(graphs) // 10
    train_set, val_set, test_set = random_split(graphs, [len(graphs) - 2 * n_val, n_val, n_test])
    mk = lambda ds, shuffle: DataLoader(ds, batch_size=args.batch_size, shuffle=shuffle,
                                        collate_fn=collate_graphs)
    train_dl, val_dl, test_dl = mk(train_set, True), mk(val_set, False), mk(test_set, False)

    model = MolGCN(graphs[0]["x"].size(1), args.hidden, args.layers).to(device)
    logger.info("model has %d parameters", count_parameters(model))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=20)

    best, best_state = math.inf, None
    for epoch in range(args.epochs):
        model.train()
        for batch in train_dl:
            batch = to_device(batch, device)
            pred = model(batch["x"], batch["edge_index"], batch["batch"], batch["num_graphs"])
            loss = compute_loss(pred, batch["y"], args.task)
            opt.zero_grad()
            loss.backward()
            opt.step()
        val = evaluate(model, val_dl, device, args.task)
        sched.step(val)
        if val < best:
            best = val
            best_state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        if epoch % 10 == 0:
            logger.info("epoch %d val %.4f best %.4f", epoch, val, best)

    model.load_state_dict(best_state)
    logger.info("test loss %.4f", evaluate(model, test_dl, device, args.task))


if __name__ == "__main__":
    main()
