"""SASRec next-item recommendation with a custom collator (MovieLens-1M / Amazon)."""
import argparse
import logging
import random
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger("sasrec")


class UserSequences(Dataset):
    def __init__(self, seqs, n_items, max_len=200):
        self.users = [u for u, s in seqs.items() if len(s) > 2]
        self.seqs = seqs
        self.n_items = n_items
        self.max_len = max_len

    def __len__(self):
        return len(self.users)

    def __getitem__(self, i):
        seq = self.seqs[self.users[i]][:-2][-(self.max_len + 1):]
        inp, pos = seq[:-1], seq[1:]
        seen = set(seq)
        neg = []
        for _ in pos:
            j = random.randint(1, self.n_items)
            while j in seen:
                j = random.randint(1, self.n_items)
            neg.append(j)
        return {"inp": inp, "pos": pos, "neg": neg}


def _left_pad(rows, max_len):
    out = np.zeros((len(rows), max_len), dtype=np.int64)
    for i, r in enumerate(rows):
        r = r[-max_len:]
        out[i, max_len - len(r):] = r
    return torch.from_numpy(out)


@dataclass
class SeqCollator:
    max_len: int = 200

    def _stack(self, samples, key):
        return _left_pad([s[key] for s in samples], self.max_len)

    def __call__(self, samples):
        return {k: self._stack(samples, k) for k in ("inp", "pos", "neg")}


class SASRec(nn.Module):
    def __init__(self, n_items, d=64, n_layers=2, n_heads=1, max_len=200, dropout=0.2):
        super().__init__()
        self.item_emb = nn.Embedding(n_items + 1, d, padding_idx=0)
        self.pos_emb = nn.Embedding(max_len, d)
        layer = nn.TransformerEncoderLayer(d, n_heads, d, dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers)
        self.ln = nn.LayerNorm(d)
        self.drop = nn.Dropout(dropout)

    def forward(self, seq):
        L = seq.size(1)
        h = self.item_emb(seq) * self.item_emb.embedding_dim ** 0.5 + self.pos_emb.weight[:L]
        causal = torch.triu(torch.ones(L, L, dtype=torch.bool, device=seq.device), 1)
        h = self.encoder(self.drop(h), mask=causal, src_key_padding_mask=seq.eq(0))
        return self.ln(h)


def bpr_step(model, batch):
    h = model(batch["inp"])
    pos_logit = (h * model.item_emb(batch["pos"])).sum(-1)
    neg_logit = (h * model.item_emb(batch["neg"])).sum(-1)
    mask = batch["pos"].ne(0).float()
    loss = -(nn.functional.logsigmoid(pos_logit - neg_logit) * mask).sum() / mask.sum()
    return loss


def load_sequences(path):
    seqs, n_items = {}, 0
    with open(path) as f:
        for ln in f:
            u, i = map(int, ln.split())
            seqs.setdefault(u, []).append(i)
            n_items = max(n_items, i)
    return seqs, n_items


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/ml-1m.txt")
    ap.add_argument("--max-len", type=int, default=200)
    ap.add_argument("--bs", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--num-workers", type=int, default=8)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    seqs, n_items = load_sequences(args.data)
    ds = UserSequences(seqs, n_items, args.max_len)
    loader = DataLoader(ds, batch_size=args.bs, shuffle=True, num_workers=args.num_workers,
                        collate_fn=SeqCollator(args.max_len), pin_memory=True)
    model = SASRec(n_items, max_len=args.max_len).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98))
    for epoch in range(args.epochs):
        model.train()
        tot, nb = 0.0, 0
        for batch in loader:
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
            loss = bpr_step(model, batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item()
            nb += 1
        logger.info("epoch %d bpr %.4f", epoch, tot / nb)
    torch.save(model.state_dict(), "sasrec.pt")


if __name__ == "__main__":
    main()
