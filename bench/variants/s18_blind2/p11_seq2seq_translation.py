"""Transformer seq2seq on a tokenized parallel corpus (IWSLT14 de-en style).

The corpus is expected as pre-tokenized integer ids saved with torch.save.
"""
import argparse
import logging
import math
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence

PAD, BOS, EOS = 0, 1, 2
StepOutput = namedtuple("StepOutput", ["loss", "ntokens", "nll"])
log = logging.getLogger("s2s")


class Seq2Seq(nn.Module):
    def __init__(self, vocab, d_model=512, nhead=8, layers=6, dropout=0.1):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.pos = nn.Embedding(1024, d_model)
        self.tf = nn.Transformer(d_model, nhead, layers, layers, 4 * d_model, dropout, batch_first=True)
        self.out = nn.Linear(d_model, vocab, bias=False)
        self.out.weight = self.emb.weight
        self.scale = math.sqrt(d_model)

    def embed(self, ids):
        pos = torch.arange(ids.size(1), device=ids.device)
        return self.emb(ids) * self.scale + self.pos(pos)

    def forward(self, src, tgt_in):
        causal = self.tf.generate_square_subsequent_mask(tgt_in.size(1)).to(src.device)
        h = self.tf(self.embed(src), self.embed(tgt_in), tgt_mask=causal,
                    src_key_padding_mask=src.eq(PAD), tgt_key_padding_mask=tgt_in.eq(PAD),
                    memory_key_padding_mask=src.eq(PAD))
        return self.out(h)


def batches(pairs, max_tokens):
    pairs = sorted(pairs, key=lambda p: len(p[0]))
    cur, cur_len = [], 0
    for s, t in pairs:
        ln = max(len(s), len(t) + 1)
        if cur and (len(cur) + 1) * max(cur_len, ln) > max_tokens:
            yield cur
            cur, cur_len = [], 0
        cur.append((s, t))
        cur_len = max(cur_len, ln)
    if cur:
        yield cur


def collate(chunk, device):
    src = pad_sequence([torch.tensor(s) for s, _ in chunk], batch_first=True, padding_value=PAD)
    tgt = [torch.tensor([BOS] + t + [EOS]) for _, t in chunk]
    tgt = pad_sequence(tgt, batch_first=True, padding_value=PAD)
    return src.to(device), tgt[:, :-1].to(device), tgt[:, 1:].to(device)


def run_batch(model, chunk, device, smoothing):
    src, tgt_in, tgt_out = collate(chunk, device)
    logits = model(src, tgt_in)
    lprobs = F.log_softmax(logits, dim=-1).view(-1, logits.size(-1))
    target = tgt_out.reshape(-1)
    mask = target.ne(PAD)
    nll = -lprobs.gather(1, target.unsqueeze(1)).squeeze(1)[mask]
    smooth = -lprobs.mean(-1)[mask]
    loss = ((1 - smoothing) * nll + smoothing * smooth).sum()
    ntok = int(mask.sum())
    return StepOutput(loss / ntok, ntok, nll.sum() / ntok)


@torch.no_grad()
def validate(model, pairs, device, max_tokens):
    model.eval()
    tot, n = 0.0, 0
    for chunk in batches(pairs, max_tokens):
        out = run_batch(model, chunk, device, 0.0)
        tot += out.nll.item() * out.ntokens
        n += out.ntokens
    model.train()
    return tot / max(n, 1)


def inverse_sqrt(step, warmup=4000):
    step = max(step, 1)
    return min(step ** -0.5, step * warmup ** -1.5) * warmup ** 0.5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/iwslt14.pt")
    ap.add_argument("--max-tokens", type=int, default=4096)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--label-smoothing", type=float, default=0.1)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    data = torch.load(args.data)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Seq2Seq(data["vocab_size"]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, inverse_sqrt)

    for epoch in range(args.epochs):
        epoch_losses = []
        for i, chunk in enumerate(batches(data["train"], args.max_tokens)):
            out = run_batch(model, chunk, device, args.label_smoothing)
            opt.zero_grad()
            out.loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            epoch_losses.append(out.loss)  # leak
            if i % 200 == 0:
                log.info("epoch %d batch %d loss %.3f", epoch, i, out.loss.item())
        train_loss = torch.stack(epoch_losses).mean().item()
        val_nll = validate(model, data["valid"], device, args.max_tokens)
        log.info("epoch %d train %.3f valid nll %.3f ppl %.2f", epoch, train_loss, val_nll, math.exp(val_nll))
        torch.save(model.state_dict(), f"s2s_epoch{epoch}.pt")


if __name__ == "__main__":
    main()
