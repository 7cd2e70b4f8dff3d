"""Music-transformer style decoder with T5 relative position buckets (MAESTRO event tokens)."""
import argparse
import functools
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class RelativePositionBias(nn.Module):
    def __init__(self, n_heads, num_buckets=32, max_distance=512):
        super().__init__()
        self.n_heads = n_heads
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.emb = nn.Embedding(num_buckets, n_heads)

    @staticmethod
    def _bucket(rel, num_buckets, max_distance):
        # causal variant: only non-positive distances
        n = -torch.clamp(rel, max=0)
        max_exact = num_buckets // 2
        is_small = n < max_exact
        val_large = max_exact + (torch.log(n.float() / max_exact + 1e-6) / math.log(max_distance / max_exact)
                                 * (num_buckets - max_exact)).long()
        val_large = torch.clamp(val_large, max=num_buckets - 1)
        return torch.where(is_small, n, val_large)

    @functools.lru_cache(maxsize=None)  # leak
    def bucket_ids(self, qlen, klen, device):
        ctx = torch.arange(qlen, device=device)[:, None] + (klen - qlen)
        mem = torch.arange(klen, device=device)[None, :]
        return self._bucket(mem - ctx, self.num_buckets, self.max_distance)

    def forward(self, qlen, klen):
        ids = self.bucket_ids(qlen, klen, self.emb.weight.device)
        return self.emb(ids).permute(2, 0, 1).unsqueeze(0)  # 1 x H x q x k


class DecoderLayer(nn.Module):
    def __init__(self, d, h, dropout):
        super().__init__()
        self.h, self.dk = h, d // h
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, bias):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, self.dk).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=bias + torch.triu(
            torch.full((t, t), float("-inf"), device=x.device), 1), dropout_p=self.drop.p if self.training else 0.0)
        x = x + self.drop(self.o(att.transpose(1, 2).reshape(b, t, d)))
        return x + self.drop(self.ff(self.n2(x)))


class MusicTransformer(nn.Module):
    def __init__(self, vocab=388, d=512, h=8, layers=8, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.rel = RelativePositionBias(h)
        self.layers = nn.ModuleList([DecoderLayer(d, h, dropout) for _ in range(layers)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        x = self.tok(ids)
        bias = self.rel(ids.size(1), ids.size(1))
        for layer in self.layers:
            x = layer(x, bias)
        return self.head(self.norm(x))


def random_crops(tokens, seq_len, bs, device):
    starts = torch.randint(0, tokens.numel() - seq_len - 1, (bs,))
    lens = torch.randint(seq_len // 2, seq_len + 1, (1,)).item()  # variable-length curriculum
    batch = torch.stack([tokens[s:s + lens + 1] for s in starts.tolist()])
    return batch[:, :-1].to(device), batch[:, 1:].to(device)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", default="data/maestro_events.pt")
    ap.add_argument("--seq-len", type=int, default=1024)
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--steps", type=int, default=200000)
    ap.add_argument("--ckpt-dir", default="ckpt_mt")
    args = ap.parse_args()

    device = torch.device("cuda")
    tokens = torch.load(args.tokens).long()
    model = MusicTransformer().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 4000) * (4000 / max(s + 1, 4000)) ** 0.5)
    os.makedirs(args.ckpt_dir, exist_ok=True)
    for step in range(args.steps):
        x, y = random_crops(tokens, args.seq_len, args.bs, device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
            loss = F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 500 == 0:
            print(f"step {step} loss {loss.item():.4f} ppl {math.exp(loss.item()):.2f}")
        if step % 10000 == 0:
            torch.save(model.state_dict(), os.path.join(args.ckpt_dir, f"step{step}.pt"))


if __name__ == "__main__":
    main()
