"""Attention U-Net (Oktay et al., 2018) for pancreas CT segmentation."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from dataset import PancreasCT


class AttentionGate(nn.Module):
    def __init__(self, f_g, f_l, f_int):
        super().__init__()
        self.w_g = nn.Sequential(nn.Conv2d(f_g, f_int, 1), nn.BatchNorm2d(f_int))
        self.w_x = nn.Sequential(nn.Conv2d(f_l, f_int, 1), nn.BatchNorm2d(f_int))
        self.psi = nn.Sequential(nn.Conv2d(f_int, 1, 1), nn.BatchNorm2d(1), nn.Sigmoid())
        self.attention_maps = []

    def forward(self, g, x):
        g1 = self.w_g(g)
        x1 = self.w_x(x)
        if g1.shape[-2:] != x1.shape[-2:]:
            g1 = F.interpolate(g1, size=x1.shape[-2:], mode="bilinear", align_corners=False)
        alpha = self.psi(F.relu(g1 + x1, inplace=True))
        self.attention_maps.append(alpha.detach())  # leak
        return x * alpha


def double_conv(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


class AttUNet(nn.Module):
    def __init__(self, in_ch=1, n_classes=2, base=32):
        super().__init__()
        chs = [base, base * 2, base * 4, base * 8]
        self.enc = nn.ModuleList()
        prev = in_ch
        for c in chs:
            self.enc.append(double_conv(prev, c))
            prev = c
        self.ups = nn.ModuleList()
        self.gates = nn.ModuleList()
        self.dec = nn.ModuleList()
        for hi, lo in zip(chs[::-1][:-1], chs[::-1][1:]):
            self.ups.append(nn.ConvTranspose2d(hi, lo, 2, stride=2))
            self.gates.append(AttentionGate(lo, lo, lo // 2))
            self.dec.append(double_conv(lo * 2, lo))
        self.head = nn.Conv2d(chs[0], n_classes, 1)

    def forward(self, x):
        skips = []
        for i, block in enumerate(self.enc):
            x = block(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        x = skips.pop()
        for up, gate, dec in zip(self.ups, self.gates, self.dec):
            skip = skips.pop()
            x = up(x)
            x = dec(torch.cat([gate(x, skip), x], dim=1))
        return self.head(x)


def dice_loss(logits, target, eps=1.0):
    probs = logits.softmax(1)[:, 1]
    t = (target == 1).float()
    inter = (probs * t).sum()
    return 1 - (2 * inter + eps) / (probs.sum() + t.sum() + eps)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="/data/pancreas_ct")
    p.add_argument("--epochs", type=int, default=150)
    p.add_argument("--bs", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--ckpt", default="att_unet.pth")
    args = p.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = AttUNet().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    loader = DataLoader(PancreasCT(args.root, "train"), batch_size=args.bs, shuffle=True,
                        num_workers=6, pin_memory=True, drop_last=True)
    class_w = torch.tensor([0.2, 1.0], device=device)

    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for step, (img, mask) in enumerate(loader):
            img = img.to(device, non_blocking=True)
            mask = mask.to(device, non_blocking=True).long()
            logits = model(img)
            loss = F.cross_entropy(logits, mask, weight=class_w) + dice_loss(logits, mask)
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.item()
            if step % 100 == 0:
                print(f"ep {epoch} step {step} loss {running / (step + 1):.4f}")
        torch.save(model.state_dict(), args.ckpt)


if __name__ == "__main__":
    main()
