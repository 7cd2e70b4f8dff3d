"""3-D CT patch loading on CPU workers; spatial augmentation runs batched on the GPU."""
import argparse
import glob
import os
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class CTPatches(Dataset):
    def __init__(self, root, patch=(128, 128, 128), per_volume=4, window=(-1000.0, 400.0)):
        self.images = sorted(glob.glob(os.path.join(root, "images", "*.npy")))
        self.labels = [p.replace(os.sep + "images" + os.sep, os.sep + "labels" + os.sep) for p in self.images]
        self.patch = tuple(patch)
        self.per_volume = per_volume
        self.window = window

    def __len__(self):
        return len(self.images) * self.per_volume

    def __getitem__(self, idx):
        i = idx // self.per_volume
        img = np.load(self.images[i], mmap_mode="r")
        lbl = np.load(self.labels[i], mmap_mode="r")
        starts = [random.randint(0, max(d - p, 0)) for d, p in zip(img.shape, self.patch)]
        sl = tuple(slice(s, s + p) for s, p in zip(starts, self.patch))
        img = np.asarray(img[sl], dtype=np.float32)
        lbl = np.asarray(lbl[sl], dtype=np.int64)
        pad = [(0, max(p - d, 0)) for d, p in zip(img.shape, self.patch)]
        img = np.pad(img, pad, constant_values=self.window[0])
        lbl = np.pad(lbl, pad)
        lo, hi = self.window
        img = (np.clip(img, lo, hi) - lo) / (hi - lo)
        return torch.from_numpy(img)[None], torch.from_numpy(lbl)


class GPUSpatialAugment:
    """Applied in the training process after the batch has been moved to the device."""

    def __init__(self, max_rot=15.0, scale=(0.85, 1.15), p_flip=0.5):
        self.max_rot = np.deg2rad(max_rot)
        self.scale = scale
        self.p_flip = p_flip

    def _thetas(self, n, device):
        ang = (torch.rand(n, 3, device=device) * 2 - 1) * self.max_rot
        c, s = ang.cos(), ang.sin()
        one, zero = torch.ones(n, device=device), torch.zeros(n, device=device)
        rx = torch.stack([one, zero, zero, zero, c[:, 0], -s[:, 0], zero, s[:, 0], c[:, 0]], 1).view(n, 3, 3)
        rz = torch.stack([c[:, 2], -s[:, 2], zero, s[:, 2], c[:, 2], zero, zero, zero, one], 1).view(n, 3, 3)
        sc = torch.empty(n, 1, 1, device=device).uniform_(*self.scale)
        theta = torch.zeros(n, 3, 4, device=device)
        theta[:, :, :3] = rz @ rx * sc
        return theta

    @torch.no_grad()
    def __call__(self, img, lbl):
        grid = F.affine_grid(self._thetas(img.size(0), img.device), img.shape, align_corners=False)
        img = F.grid_sample(img, grid, mode="bilinear", padding_mode="border", align_corners=False)
        lbl = F.grid_sample(lbl[:, None].float(), grid, mode="nearest", align_corners=False)[:, 0].long()
        for axis in (2, 3, 4):
            if random.random() < self.p_flip:
                img, lbl = img.flip(axis), lbl.flip(axis - 1)
        return img, lbl


def seed_worker(worker_id):
    seed = torch.initial_seed() % 2 ** 32
    np.random.seed(seed)
    random.seed(seed)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--batch-size", type=int, default=2)
    ap.add_argument("--workers", type=int, default=6)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()

    device = torch.device("cuda")
    loader = DataLoader(CTPatches(args.root), batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, worker_init_fn=seed_worker, pin_memory=True,
                        drop_last=True, persistent_workers=True)
    augment = GPUSpatialAugment()
    for step, (x, y) in enumerate(loader):
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        x, y = augment(x, y)
        print(f"step {step}: {tuple(x.shape)} fg={(y > 0).float().mean().item():.3%}")
        if step + 1 >= args.steps:
            break
