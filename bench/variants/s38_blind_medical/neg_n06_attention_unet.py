"""Attention-gated U-Net with optional capture of gate coefficients for visualisation."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from dataset import PancreasCT


class GridAttention(nn.Module):
    def __init__(self, gate_ch, skip_ch, inter_ch):
        super().__init__()
        self.theta = nn.Conv2d(skip_ch, inter_ch, 2, stride=2, bias=False)
        self.phi = nn.Conv2d(gate_ch, inter_ch, 1)
        self.psi = nn.Conv2d(inter_ch, 1, 1)
        self.capture = False
        self.last_alpha = None

    def forward(self, gate, skip):
        t = self.theta(skip)
        p = F.interpolate(self.phi(gate), size=t.shape[-2:], mode="bilinear", align_corners=False)
        alpha = torch.sigmoid(self.psi(F.relu(t + p)))
        alpha = F.interpolate(alpha, size=skip.shape[-2:], mode="bilinear", align_corners=False)
        if self.capture:
            self.last_alpha = alpha.detach().cpu()
        return skip * alpha


def conv_bn(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(True),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(True))


class AttentionUNet(nn.Module):
    def __init__(self, n_classes=2, widths=(32, 64, 128, 256)):
        super().__init__()
        self.down = nn.ModuleList([conv_bn(1 if i == 0 else widths[i - 1], w) for i, w in enumerate(widths)])
        rev = widths[::-1]
        self.att = nn.ModuleList([GridAttention(rev[i], rev[i + 1], rev[i + 1] // 2) for i in range(3)])
        self.up = nn.ModuleList([nn.ConvTranspose2d(rev[i], rev[i + 1], 2, 2) for i in range(3)])
        self.fuse = nn.ModuleList([conv_bn(rev[i + 1] * 2, rev[i + 1]) for i in range(3)])
        self.cls = nn.Conv2d(widths[0], n_classes, 1)

    def set_capture(self, flag):
        for m in self.att:
            m.capture = flag
            if not flag:
                m.last_alpha = None

    def forward(self, x):
        feats = []
        for i, d in enumerate(self.down):
            x = d(x if i == 0 else F.max_pool2d(x, 2))
            feats.append(x)
        x = feats[-1]
        for i in range(3):
            skip = feats[-2 - i]
            gated = self.att[i](x, skip)
            x = self.fuse[i](torch.cat([self.up[i](x), gated], 1))
        return self.cls(x)


@torch.no_grad()
def dump_attention(model, batch, out_dir, tag):
    model.eval()
    model.set_capture(True)
    model(batch)
    for i, gate in enumerate(model.att):
        np.save(os.path.join(out_dir, f"{tag}_gate{i}.npy"), gate.last_alpha.numpy())
    model.set_capture(False)
    model.train()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/pancreas_ct")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--vis-dir", default="vis")
    args = ap.parse_args()
    os.makedirs(args.vis_dir, exist_ok=True)

    dev = torch.device("cuda")
    net = AttentionUNet().to(dev)
    optim = torch.optim.Adam(net.parameters(), lr=2e-4)
    loader = DataLoader(PancreasCT(args.root, "train"), batch_size=args.batch, shuffle=True, num_workers=6)
    vis_batch = next(iter(loader))[0][:4].to(dev)

    for ep in range(args.epochs):
        net.train()
        tot = 0.0
        for img, mask in loader:
            img, mask = img.to(dev), mask.to(dev).long()
            loss = F.cross_entropy(net(img), mask)
            optim.zero_grad()
            loss.backward()
            optim.step()
            tot += loss.item()
        print(f"epoch {ep}: loss {tot / len(loader):.4f}")
        if ep % 10 == 0:
            dump_attention(net, vis_batch, args.vis_dir, f"ep{ep:03d}")


if __name__ == "__main__":
    main()
