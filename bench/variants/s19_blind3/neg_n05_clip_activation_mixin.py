"""Tiny CLIP-style image/text towers with optional activation statistics.

The statistics are collected through ``ActStatsMixin`` so both towers can
report per-block residual magnitudes (handy when tuning ls_init_value).
"""
import argparse
import logging
import math
from collections import OrderedDict, deque

import torch
import torch.nn.functional as F
from torch import nn

_logger = logging.getLogger(__name__)


class ActStatsMixin:
    """Adds ``record_act`` / ``act_report`` to any module tree."""

    track_acts = False
    act_window = 100

    def _init_act_stats(self):
        self._act_stats = OrderedDict()

    def record_act(self, name, value):
        if not self.track_acts:
            return
        rms = value.detach().float().pow(2).mean().sqrt().item()
        if name not in self._act_stats:
            self._act_stats[name] = deque(maxlen=self.act_window)
        self._act_stats[name].append(rms)

    def act_report(self):
        return {k: sum(v) / len(v) for k, v in self._act_stats.items() if len(v)}


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x * self.gamma


class ResidualAttentionBlock(nn.Module):
    def __init__(self, d_model, n_head, mlp_ratio=4.0, ls_init_value=None):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_head, batch_first=True)
        self.ls_1 = LayerScale(d_model, ls_init_value) if ls_init_value else nn.Identity()
        self.ln_2 = nn.LayerNorm(d_model)
        hidden = int(d_model * mlp_ratio)
        self.mlp = nn.Sequential(OrderedDict([
            ("c_fc", nn.Linear(d_model, hidden)),
            ("gelu", nn.GELU()),
            ("c_proj", nn.Linear(hidden, d_model)),
        ]))
        self.ls_2 = LayerScale(d_model, ls_init_value) if ls_init_value else nn.Identity()

    def forward(self, x, attn_mask=None):
        y = self.ln_1(x)
        x = x + self.ls_1(self.attn(y, y, y, need_weights=False, attn_mask=attn_mask)[0])
        x = x + self.ls_2(self.mlp(self.ln_2(x)))
        return x


class Transformer(ActStatsMixin, nn.Module):
    def __init__(self, width, layers, heads, ls_init_value=None):
        super().__init__()
        self._init_act_stats()
        self.resblocks = nn.ModuleList(
            [ResidualAttentionBlock(width, heads, ls_init_value=ls_init_value) for _ in range(layers)]
        )

    def forward(self, x, attn_mask=None):
        for i, r in enumerate(self.resblocks):
            x = r(x, attn_mask=attn_mask)
            self.record_act(f"block{i}", x)
        return x


class TinyCLIP(nn.Module):
    def __init__(self, embed_dim=128, width=128, layers=4, heads=4, vocab=1000, ctx=32, patch=8, img=32):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, width, patch, patch)
        self.pos_img = nn.Parameter(torch.zeros((img // patch) ** 2, width))
        self.visual = Transformer(width, layers, heads, ls_init_value=1e-4)
        self.tok = nn.Embedding(vocab, width)
        self.pos_txt = nn.Parameter(torch.zeros(ctx, width))
        self.text = Transformer(width, layers, heads)
        self.proj_v = nn.Linear(width, embed_dim, bias=False)
        self.proj_t = nn.Linear(width, embed_dim, bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def encode_image(self, images):
        x = self.patch_embed(images).flatten(2).transpose(1, 2) + self.pos_img
        return F.normalize(self.proj_v(self.visual(x).mean(1)), dim=-1)

    def encode_text(self, tokens):
        x = self.tok(tokens) + self.pos_txt
        return F.normalize(self.proj_t(self.text(x)[:, -1]), dim=-1)

    def forward(self, images, tokens):
        return self.encode_image(images), self.encode_text(tokens), self.logit_scale.exp()


def clip_loss(img_f, txt_f, scale):
    logits = scale * img_f @ txt_f.t()
    labels = torch.arange(logits.size(0), device=logits.device)
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--report-acts", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    model = TinyCLIP()
    Transformer.track_acts = args.report_acts
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.2)
    for step in range(args.steps):
        images = torch.randn(args.batch_size, 3, 32, 32)
        tokens = torch.randint(0, 1000, (args.batch_size, 32))
        loss = clip_loss(*model(images, tokens))
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))
        if step % 100 == 0:
            _logger.info("step %d loss %.4f", step, loss.item())
            if args.report_acts:
                _logger.info("visual acts %s", model.visual.act_report())


if __name__ == "__main__":
    main()
