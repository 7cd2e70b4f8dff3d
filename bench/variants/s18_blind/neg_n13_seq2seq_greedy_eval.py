"""GRU encoder-decoder with attention for character-level transliteration.

`evaluate` reports corpus NLL/perplexity with teacher forcing and a greedy
decode accuracy on the dev set; called after every epoch by train.py.
"""
import math
import random

import torch
from torch import nn
from torch.nn import functional as F

SOS, EOS, PAD = 1, 2, 0


class Encoder(nn.Module):
    def __init__(self, vocab, emb=128, hid=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.rnn = nn.GRU(emb, hid, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * hid, hid)

    def forward(self, src, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(src), lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, h = self.rnn(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        h = torch.tanh(self.bridge(torch.cat([h[0], h[1]], dim=-1)))
        return out, h.unsqueeze(0)


class AttnDecoder(nn.Module):
    def __init__(self, vocab, emb=128, hid=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.attn = nn.Linear(hid, 2 * hid, bias=False)
        self.rnn = nn.GRU(emb + 2 * hid, hid, batch_first=True)
        self.out = nn.Linear(hid + 2 * hid, vocab)

    def step(self, tok, h, enc_out, src_mask):
        scores = torch.bmm(enc_out, self.attn(h[-1]).unsqueeze(-1)).squeeze(-1)
        scores = scores.masked_fill(~src_mask, float("-inf"))
        ctx = torch.bmm(F.softmax(scores, -1).unsqueeze(1), enc_out)
        o, h = self.rnn(torch.cat([self.embed(tok).unsqueeze(1), ctx], -1), h)
        return self.out(torch.cat([o, ctx], -1)).squeeze(1), h


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab, tgt_vocab):
        super().__init__()
        self.enc = Encoder(src_vocab)
        self.dec = AttnDecoder(tgt_vocab)

    def forward(self, src, src_len, tgt, teacher_forcing=1.0):
        enc_out, h = self.enc(src, src_len)
        mask = src != PAD
        tok = tgt[:, 0]
        logits = []
        for t in range(1, tgt.size(1)):
            lo, h = self.dec.step(tok, h, enc_out, mask)
            logits.append(lo)
            tok = tgt[:, t] if random.random() < teacher_forcing else lo.argmax(-1)
        return torch.stack(logits, 1)

    def greedy(self, src, src_len, max_len=60):
        enc_out, h = self.enc(src, src_len)
        mask = src != PAD
        tok = torch.full((src.size(0),), SOS, dtype=torch.long, device=src.device)
        outs = []
        for _ in range(max_len):
            lo, h = self.dec.step(tok, h, enc_out, mask)
            tok = lo.argmax(-1)
            outs.append(tok)
        return torch.stack(outs, 1)


def strip_eos(seq):
    seq = seq.tolist()
    return seq[: seq.index(EOS)] if EOS in seq else seq


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    total_nll, n_tokens = 0.0, 0
    exact, n_seqs = 0, 0
    for src, src_len, tgt in loader:
        src, tgt = src.to(device), tgt.to(device)
        logits = model(src, src_len, tgt, teacher_forcing=1.0)
        gold = tgt[:, 1:]
        nll = F.cross_entropy(logits.reshape(-1, logits.size(-1)), gold.reshape(-1), ignore_index=PAD, reduction="sum")
        total_nll = total_nll + nll
        n_tokens += (gold != PAD).sum().item()

        hyp = model.greedy(src, src_len, max_len=tgt.size(1) + 10)
        for h, g in zip(hyp, gold):
            exact += int(strip_eos(h) == strip_eos(g))
            n_seqs += 1
    model.train()
    avg = float(total_nll) / max(n_tokens, 1)
    return {"nll": avg, "ppl": math.exp(min(avg, 50)), "acc": exact / max(n_seqs, 1)}


def train_epoch(model, loader, opt, device, tf_ratio=0.5, clip=1.0):
    model.train()
    running = 0.0
    for i, (src, src_len, tgt) in enumerate(loader):
        src, tgt = src.to(device), tgt.to(device)
        logits = model(src, src_len, tgt, teacher_forcing=tf_ratio)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1), ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        running += loss.item()
    return running / max(len(loader), 1)
