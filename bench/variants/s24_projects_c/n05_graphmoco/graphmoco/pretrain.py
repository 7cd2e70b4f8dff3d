"""accelerate launch -m graphmoco.pretrain --root data/zinc_standard_agent"""
import argparse
import logging

import torch
from accelerate import Accelerator
from accelerate.logging import get_logger
from torch.utils.data import Dataset
from torch_geometric.data import Batch
from torch_geometric.datasets import ZINC

import graphmoco
from graphmoco.encoder import GINEncoder, TwoViewAugment, make_key_encoder
from graphmoco.queue import info_nce

logger = get_logger("graphmoco")


class PairDataset(Dataset):
    def __init__(self, base, augment):
        self.base, self.augment = base, augment

    def __len__(self):
        return len(self.base)

    def __getitem__(self, i):
        return self.augment(self.base[i])


def collate_pairs(pairs):
    a, b = zip(*pairs)
    return Batch.from_data_list(list(a)), Batch.from_data_list(list(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--queue", type=int, default=16384)
    ap.add_argument("--momentum", type=float, default=0.995)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    acc = Accelerator(gradient_accumulation_steps=1)

    base = ZINC(args.root, subset=False, split="train")
    base.data.x = base.data.x.view(-1, 1)
    base.data.edge_attr = base.data.edge_attr.view(-1, 1)
    ds = PairDataset(base, TwoViewAugment())
    loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=8,
                                         collate_fn=collate_pairs, drop_last=True, persistent_workers=True)

    online = GINEncoder()
    target = make_key_encoder(online)
    queue = graphmoco.MemoryQueue(dim=128, size=args.queue)
    opt = torch.optim.AdamW(online.parameters(), lr=args.lr, weight_decay=1e-5)
    online, opt, loader = acc.prepare(online, opt, loader)
    target, queue = target.to(acc.device), queue.to(acc.device)

    for epoch in range(args.epochs):
        online.train()
        total, n = 0.0, 0
        for v1, v2 in loader:
            q = online(v1)
            with torch.no_grad():
                k = target(v2)
            loss = info_nce(q, k, queue.negatives())
            acc.backward(loss)
            opt.step()
            opt.zero_grad(set_to_none=True)
            graphmoco.momentum_update(acc.unwrap_model(online), target, args.momentum)
            queue.enqueue(acc.gather(k))
            total += loss.detach().item()
            n += 1
        logger.info(f"epoch {epoch}: info-nce {total / max(n, 1):.4f}", main_process_only=True)
        if acc.is_main_process:
            torch.save(acc.unwrap_model(online).state_dict(), f"gin_moco_ep{epoch}.pt")


if __name__ == "__main__":
    main()
