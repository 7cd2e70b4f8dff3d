"""Semi-supervised node classification on Planetoid datasets with probes."""
import argparse
import json
import logging
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.datasets import Planetoid

from gnnprobe import hooks
from gnnprobe.model import GCN, normalized_adjacency

log = logging.getLogger("gnnprobe")


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def accuracy(logits: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> float:
    return (logits[mask].argmax(-1) == y[mask]).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/planetoid")
    ap.add_argument("--dataset", default="Cora", choices=["Cora", "CiteSeer", "PubMed"])
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=2000)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--wd", type=float, default=5e-4)
    ap.add_argument("--residual", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="probe_summary.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    set_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    data = Planetoid(args.root, args.dataset)[0].to(device)
    adj = normalized_adjacency(data.edge_index, data.num_nodes)
    model = GCN(data.num_features, args.hidden, int(data.y.max()) + 1,
                num_layers=args.layers, residual=args.residual).to(device)
    recorder = model.attach_probes(hooks.ActivationRecorder(every=1))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.wd)

    best_val, best_test = 0.0, 0.0
    for epoch in range(1, args.epochs + 1):
        model.train()
        opt.zero_grad()
        out = model(data.x, adj)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        opt.step()

        model.eval()
        with torch.no_grad():
            logits = model(data.x, adj)
        val_acc = accuracy(logits, data.y, data.val_mask)
        test_acc = accuracy(logits, data.y, data.test_mask)
        if val_acc > best_val:
            best_val, best_test = val_acc, test_acc
        if epoch % 100 == 0:
            log.info("epoch %4d loss %.4f val %.4f test %.4f", epoch, loss.item(), val_acc, test_acc)

    log.info("best val %.4f -> test %.4f", best_val, best_test)
    summary = hooks.summarise(recorder, data.edge_index)
    with open(args.out, "w") as f:
        json.dump(summary, f)


if __name__ == "__main__":
    main()
