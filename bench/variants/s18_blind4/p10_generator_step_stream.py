"""Streaming pretraining loop for a small char-level transformer. Training
steps are produced by a generator so that logging / eval / checkpointing can
be composed as stream stages."""
import argparse
import itertools
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab=256, d=256, n_layer=4, n_head=4, ctx=256):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, ctx, d))
        layer = nn.TransformerEncoderLayer(d, n_head, 4 * d, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, n_layer)
        self.out = nn.Linear(d, vocab)

    def forward(self, idx):
        T = idx.size(1)
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=idx.device)
        h = self.tok(idx) + self.pos[:, :T]
        return self.out(self.blocks(h, mask=mask, is_causal=True))


def batches(data, bs, ctx, device):
    while True:
        ix = torch.randint(len(data) - ctx - 1, (bs,))
        x = torch.stack([data[i:i + ctx] for i in ix]).to(device)
        y = torch.stack([data[i + 1:i + ctx + 1] for i in ix]).to(device)
        yield x, y


def train_steps(model, opt, stream, grad_clip=1.0):
    model.train()
    for step, (x, y) in enumerate(stream):
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        opt.step()
        yield {"step": step, "loss": loss, "gnorm": gnorm.item()}


def log_every(records, n):
    t0 = time.time()
    for rec in records:
        if rec["step"] % n == 0:
            dt = time.time() - t0
            print(f"step {rec['step']:6d} loss {rec['loss'].item():.4f} gnorm {rec['gnorm']:.2f} ({dt:.1f}s)")
            t0 = time.time()
        yield rec


def summarize_run(records):
    total, n, worst = 0.0, 0, 0.0
    for rec in records:
        total = total + rec["loss"]  # leak
        n += 1
        worst = max(worst, rec["gnorm"])
    return {"mean_loss": float(total) / max(n, 1), "steps": n, "max_gnorm": worst}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--text", default="input.txt")
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--ctx", type=int, default=256)
    args = ap.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    with open(args.text, "rb") as fh:
        data = torch.tensor(list(fh.read()), dtype=torch.long)
    model = TinyLM(ctx=args.ctx).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)

    stream = batches(data, args.bs, args.ctx, device)
    pipeline = log_every(itertools.islice(train_steps(model, opt, stream), args.steps), 200)
    summary = summarize_run(pipeline)
    print(summary)
    torch.save(model.state_dict(), "tinylm.pt")


if __name__ == "__main__":
    main()
