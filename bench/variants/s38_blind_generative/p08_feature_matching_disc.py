"""Multi-scale patch discriminator with a feature-matching objective for the pix2pix-HD style trainer."""
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm


class PatchDiscriminator(nn.Module):
    def __init__(self, in_ch: int = 6, ch: int = 64, n_layers: int = 3):
        super().__init__()
        layers = [nn.Sequential(spectral_norm(nn.Conv2d(in_ch, ch, 4, 2, 1)), nn.LeakyReLU(0.2, True))]
        c = ch
        for i in range(1, n_layers):
            layers.append(nn.Sequential(spectral_norm(nn.Conv2d(c, min(c * 2, 512), 4, 2, 1)),
                                        nn.LeakyReLU(0.2, True)))
            c = min(c * 2, 512)
        layers.append(nn.Sequential(spectral_norm(nn.Conv2d(c, 1, 4, 1, 1))))
        self.layers = nn.ModuleList(layers)
        self.real_feature_means: List[List[torch.Tensor]] = []

    def forward(self, x: torch.Tensor, is_real: bool = False):
        feats = []
        h = x
        for layer in self.layers:
            h = layer(h)
            feats.append(h)
        if is_real:
            self.real_feature_means.append([f.detach().mean(0) for f in feats[:-1]])  # leak
        return feats[-1], feats[:-1]

    def running_real_features(self) -> List[torch.Tensor]:
        per_layer = zip(*self.real_feature_means)
        return [torch.stack(layer_means).mean(0) for layer_means in per_layer]


class MultiScaleDiscriminator(nn.Module):
    def __init__(self, num_scales: int = 2, **kw):
        super().__init__()
        self.discs = nn.ModuleList(PatchDiscriminator(**kw) for _ in range(num_scales))

    def forward(self, x, is_real: bool = False):
        outs = []
        for i, d in enumerate(self.discs):
            if i > 0:
                x = F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)
            outs.append(d(x, is_real=is_real))
        return outs


def feature_matching_loss(D: MultiScaleDiscriminator, fake_outs) -> torch.Tensor:
    loss = 0.0
    for d, (_, fake_feats) in zip(D.discs, fake_outs):
        targets = d.running_real_features()
        for f, t in zip(fake_feats, targets):
            loss = loss + F.l1_loss(f.mean(0), t)
    return loss


def train_step(G, D, opt_g, opt_d, label_map, real, fm_weight: float = 10.0):
    fake = G(label_map)
    d_real = D(torch.cat([label_map, real], 1), is_real=True)
    d_fake = D(torch.cat([label_map, fake.detach()], 1))
    d_loss = sum(F.relu(1 - r[0]).mean() + F.relu(1 + f[0]).mean() for r, f in zip(d_real, d_fake))
    opt_d.zero_grad(set_to_none=True)
    d_loss.backward()
    opt_d.step()

    g_outs = D(torch.cat([label_map, fake], 1))
    adv = sum(-o[0].mean() for o in g_outs)
    fm = feature_matching_loss(D, g_outs)
    g_loss = adv + fm_weight * fm
    opt_g.zero_grad(set_to_none=True)
    g_loss.backward()
    opt_g.step()
    return {"d": d_loss.item(), "g_adv": adv.item(), "g_fm": float(fm)}


def train(G, D, loader, epochs: int, device: str = "cuda", log_every: int = 100):
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    it = 0
    for epoch in range(epochs):
        for label_map, real in loader:
            stats = train_step(G, D, opt_g, opt_d, label_map.to(device), real.to(device))
            it += 1
            if it % log_every == 0:
                print(f"ep {epoch} it {it} " + " ".join(f"{k}={v:.3f}" for k, v in stats.items()))
