"""python -m ncfrec.train --ratings ml-1m/ratings.dat"""
import argparse
import logging

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

import ncfrec
from ncfrec.data import NegativeSampler, leave_one_out, load_ratings

log = logging.getLogger("ncfrec")


@torch.no_grad()
def evaluate(model, test_items, seen, n_items, device, k=10, n_neg=99, seed=0):
    model.eval()
    rng = np.random.default_rng(seed)
    meter = ncfrec.RankingMeter(k)
    for u, pos in test_items.items():
        negs = rng.choice(n_items, size=n_neg * 2)
        negs = [j for j in negs if j not in seen[u]][:n_neg]
        cands = torch.tensor([pos] + negs, device=device)
        scores = model(torch.full_like(cands, u), cands)
        top = cands[scores.topk(k).indices].tolist()
        meter.add(top, pos)
    return meter.result()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ratings", required=True)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--num-neg", type=int, default=4)
    ap.add_argument("--workers", type=int, default=4)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    users, items, ts = load_ratings(args.ratings)
    n_users, n_items = users.max() + 1, items.max() + 1
    train_pairs, test_items = leave_one_out(users, items, ts)
    ds = NegativeSampler(train_pairs, n_items, args.num_neg)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=args.workers)

    model = ncfrec.NeuMF(n_users, n_items).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        loss_meter = ncfrec.AverageMeter("bce")
        for u, i, y in loader:
            u, i, y = u.to(device), i.to(device), y.to(device)
            logits = model(u, i)
            loss = F.binary_cross_entropy_with_logits(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_meter.update(loss.item(), y.size(0))
        metrics = evaluate(model, test_items, ds.seen, n_items, device)
        log.info("epoch %d %r %s", epoch, loss_meter, metrics)


if __name__ == "__main__":
    main()
