"""Full-batch GraphSAGE training on Planetoid graphs with periodic probes."""
import argparse
import logging
import os

import torch
import torch.nn.functional as F
from torch_geometric.datasets import Planetoid

from sagehooks.hooks import embedding_stats
from sagehooks.model import GraphSAGE, count_parameters

log = logging.getLogger("sagehooks")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data")
    ap.add_argument("--dataset", default="PubMed")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=500)
    ap.add_argument("--lr", type=float, default=5e-3)
    ap.add_argument("--probe-every", type=int, default=50)
    ap.add_argument("--export", default="embeddings")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    data = Planetoid(os.path.join(args.root, args.dataset), args.dataset)[0].to(device)
    model = GraphSAGE(data.num_features, args.hidden, int(data.y.max()) + 1, args.layers).to(device)
    log.info("params: %d", count_parameters(model))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)

    oom_skips = 0
    for epoch in range(1, args.epochs + 1):
        model.train()
        opt.zero_grad()
        try:
            out = model(data.x, data.edge_index)
            loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
            loss.backward()
            opt.step()
        except torch.cuda.OutOfMemoryError as exc:
            oom_skips += 1
            log.warning("OOM at epoch %d (%s); skipping step", epoch, exc)
            torch.cuda.empty_cache()
            continue

        if epoch % args.probe_every == 0:
            feats = model.embed(data.x, data.edge_index)
            stats = embedding_stats(feats)
            with torch.no_grad():
                model.eval()
                pred = model(data.x, data.edge_index).argmax(-1)
            val = (pred[data.val_mask] == data.y[data.val_mask]).float().mean().item()
            log.info("epoch %d loss %.4f val %.4f %s", epoch, loss.item(), val, stats)

    os.makedirs(args.export, exist_ok=True)
    torch.save(model.embed(data.x, data.edge_index), os.path.join(args.export, "layers.pt"))
    log.info("done (%d OOM skips)", oom_skips)


if __name__ == "__main__":
    main()
