"""Small Conformer-CTC recipe (LibriSpeech 100h).

Activation magnitudes per block are profiled to debug fp16 overflow.
"""
import argparse
import logging
import math
from collections import defaultdict

import torch
import torch.nn as nn
import torchaudio

logger = logging.getLogger("asr")


class ActivationProfiler:
    enabled = True

    def __init__(self):
        self.stats = defaultdict(list)

    def log(self, name, value):
        if self.enabled:
            self.stats[name].append(value)  # leak

    def report(self):
        return {k: float(v[-1]) for k, v in self.stats.items() if v}


class ConvModule(nn.Module):
    def __init__(self, d, k=31):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, k, padding=k // 2, groups=d)
        self.bn = nn.BatchNorm1d(d)
        self.pw2 = nn.Conv1d(d, d, 1)

    def forward(self, x):
        y = self.ln(x).transpose(1, 2)
        y = nn.functional.glu(self.pw1(y), dim=1)
        y = self.pw2(nn.functional.silu(self.bn(self.dw(y))))
        return y.transpose(1, 2)


class ConformerBlock(nn.Module):
    profiler = None

    def __init__(self, d, heads, idx):
        super().__init__()
        self.idx = idx
        self.ff1 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        self.ln_att = nn.LayerNorm(d)
        self.att = nn.MultiheadAttention(d, heads, batch_first=True)
        self.conv = ConvModule(d)
        self.ff2 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        self.ln_out = nn.LayerNorm(d)

    def forward(self, x, pad_mask):
        x = x + 0.5 * self.ff1(x)
        h = self.ln_att(x)
        x = x + self.att(h, h, h, key_padding_mask=pad_mask, need_weights=False)[0]
        x = x + self.conv(x)
        x = x + 0.5 * self.ff2(x)
        if ConformerBlock.profiler is not None:
            ConformerBlock.profiler.log(f"block{self.idx}", x.abs().amax())
        return self.ln_out(x)


class ConformerCTC(nn.Module):
    def __init__(self, n_mels=80, d=256, heads=4, layers=12, vocab=32):
        super().__init__()
        self.subsample = nn.Sequential(nn.Conv2d(1, d, 3, 2), nn.ReLU(), nn.Conv2d(d, d, 3, 2), nn.ReLU())
        self.proj = nn.Linear(d * (((n_mels - 1) // 2 - 1) // 2), d)
        self.blocks = nn.ModuleList([ConformerBlock(d, heads, i) for i in range(layers)])
        self.out = nn.Linear(d, vocab)

    def forward(self, feats, lens):
        x = self.subsample(feats.unsqueeze(1))
        b, c, t, f = x.shape
        x = self.proj(x.permute(0, 2, 1, 3).reshape(b, t, c * f))
        lens = ((lens - 1) // 2 - 1) // 2
        pad = torch.arange(t, device=x.device)[None] >= lens[:, None]
        for blk in self.blocks:
            x = blk(x, pad)
        return self.out(x).log_softmax(-1), lens


def collate(batch, featurizer, charset):
    feats, tgts = [], []
    for wav, sr, text, *_ in batch:
        feats.append(featurizer(wav).squeeze(0).transpose(0, 1).clamp_min(1e-10).log())
        tgts.append(torch.tensor([charset.get(c, 1) for c in text.lower()]))
    flen = torch.tensor([f.size(0) for f in feats])
    tlen = torch.tensor([t.size(0) for t in tgts])
    return nn.utils.rnn.pad_sequence(feats, batch_first=True), flen, torch.cat(tgts), tlen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/librispeech")
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    charset = {c: i + 2 for i, c in enumerate(" abcdefghijklmnopqrstuvwxyz'")}
    mel = torchaudio.transforms.MelSpectrogram(16000, n_fft=400, hop_length=160, n_mels=80)
    ds = torchaudio.datasets.LIBRISPEECH(args.root, url="train-clean-100", download=False)
    dl = torch.utils.data.DataLoader(ds, batch_size=args.bs, shuffle=True, num_workers=6,
                                     collate_fn=lambda b: collate(b, mel, charset))
    dev = torch.device("cuda")
    model = ConformerCTC().to(dev)
    if args.profile:
        ConformerBlock.profiler = ActivationProfiler()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.98), weight_decay=1e-3)
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    scaler = torch.cuda.amp.GradScaler()

    step = 0
    for ep in range(args.epochs):
        for feats, flen, tgt, tlen in dl:
            with torch.autocast("cuda", dtype=torch.float16):
                logp, olen = model(feats.to(dev), flen.to(dev))
            loss = ctc(logp.float().transpose(0, 1), tgt.to(dev), olen, tlen.to(dev))
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            scaler.step(opt)
            scaler.update()
            step += 1
            if step % 100 == 0:
                msg = f"ep {ep} step {step} ctc {loss.item():.3f} lr {opt.param_groups[0]['lr']:.2e}"
                if ConformerBlock.profiler is not None:
                    msg += f" amax {ConformerBlock.profiler.report()}"
                logger.info(msg)
        torch.save(model.state_dict(), f"conformer_ep{ep}.pt")


if __name__ == "__main__":
    main()
