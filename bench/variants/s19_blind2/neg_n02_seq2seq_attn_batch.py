"""Batched seq2seq with Luong attention (dot score) and teacher forcing.

Training loop accumulates plain python floats for the printed / plotted
curves; the per-step decoder losses are summed inside the batch only.
"""
import argparse
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.nn.utils import clip_grad_norm_


class Encoder(nn.Module):
    def __init__(self, vocab, emb, hid, n_layers=2, dropout=0.2):
        super(Encoder, self).__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=0)
        self.rnn = nn.GRU(emb, hid, n_layers, dropout=dropout, bidirectional=True)
        self.hid = hid

    def forward(self, src, lengths):
        emb = self.embed(src)
        packed = nn.utils.rnn.pack_padded_sequence(emb, lengths)
        out, h = self.rnn(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out)
        out = out[:, :, :self.hid] + out[:, :, self.hid:]
        return out, h


class Attention(nn.Module):
    def forward(self, hidden, enc_out):
        # hidden: (B, H), enc_out: (T, B, H)
        scores = torch.einsum('bh,tbh->bt', hidden, enc_out)
        return F.softmax(scores, dim=1)


class Decoder(nn.Module):
    def __init__(self, vocab, emb, hid, n_layers=2, dropout=0.2):
        super(Decoder, self).__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=0)
        self.rnn = nn.GRU(emb + hid, hid, n_layers, dropout=dropout)
        self.attn = Attention()
        self.out = nn.Linear(hid * 2, vocab)
        self.n_layers = n_layers

    def forward(self, tok, last_hidden, enc_out):
        emb = self.embed(tok).unsqueeze(0)
        a = self.attn(last_hidden[-1], enc_out)                  # (B, T)
        ctx = torch.bmm(a.unsqueeze(1), enc_out.transpose(0, 1))  # (B, 1, H)
        ctx = ctx.transpose(0, 1)
        out, hidden = self.rnn(torch.cat([emb, ctx], 2), last_hidden)
        logits = self.out(torch.cat([out.squeeze(0), ctx.squeeze(0)], 1))
        return F.log_softmax(logits, dim=1), hidden, a


def train_batch(src, lengths, trg, encoder, decoder, enc_opt, dec_opt, tf_ratio, clip=50.0):
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    enc_out, enc_h = encoder(src, lengths)
    hidden = enc_h[:decoder.n_layers]
    tok = trg[0]
    loss = 0
    for t in range(1, trg.size(0)):
        logp, hidden, _ = decoder(tok, hidden, enc_out)
        loss = loss + F.nll_loss(logp, trg[t], ignore_index=0)
        if random.random() < tf_ratio:
            tok = trg[t]
        else:
            tok = logp.argmax(1).detach()
    loss = loss / (trg.size(0) - 1)
    loss.backward()
    clip_grad_norm_(encoder.parameters(), clip)
    clip_grad_norm_(decoder.parameters(), clip)
    enc_opt.step()
    dec_opt.step()
    return loss.item()


def run(args, loader, src_vocab, trg_vocab):
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    encoder = Encoder(len(src_vocab), 256, 512).to(device)
    decoder = Decoder(len(trg_vocab), 256, 512).to(device)
    enc_opt = optim.Adam(encoder.parameters(), lr=args.lr)
    dec_opt = optim.Adam(decoder.parameters(), lr=args.lr * 5.0)

    plot_losses = []
    print_loss_total = 0.0
    start = time.time()
    it = 0
    for epoch in range(1, args.epochs + 1):
        for i, (src, lengths, trg) in enumerate(loader):
            src, trg = src.to(device, non_blocking=True), trg.to(device, non_blocking=True)
            loss = train_batch(src, lengths, trg, encoder, decoder, enc_opt, dec_opt,
                               args.teacher_forcing)
            print_loss_total += loss
            it += 1
            if it % args.print_every == 0:
                avg = print_loss_total / args.print_every
                plot_losses.append(avg)
                print_loss_total = 0.0
                print('Epoch [%d/%d] Iter [%d] Loss: %.4f (%.0fs)'
                      % (epoch, args.epochs, it, avg, time.time() - start))
    return encoder, decoder, plot_losses


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=10)
    parser.add_argument('--lr', type=float, default=1e-4)
    parser.add_argument('--teacher_forcing', type=float, default=0.5)
    parser.add_argument('--print_every', type=int, default=100)
    args = parser.parse_args()
    from data import build_loader  # project-local
    loader, sv, tv = build_loader('data/iwslt', batch_size=64)
    run(args, loader, sv, tv)
