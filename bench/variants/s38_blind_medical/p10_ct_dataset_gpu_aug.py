"""Patch dataset for 3-D CT with on-the-fly spatial augmentation."""
import argparse
import glob
import os
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def random_affine_grid(shape, max_rot=15.0, scale=(0.85, 1.15), device="cpu"):
    angles = np.deg2rad(np.random.uniform(-max_rot, max_rot, size=3))
    cx, cy, cz = np.cos(angles)
    sx, sy, sz = np.sin(angles)
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    rot = rz @ ry @ rx * np.random.uniform(*scale)
    theta = np.zeros((1, 3, 4), dtype=np.float32)
    theta[0, :, :3] = rot
    theta = torch.from_numpy(theta).to(device)
    return F.affine_grid(theta, (1, 1) + tuple(shape), align_corners=False)


class CTPatchDataset(Dataset):
    def __init__(self, root, patch_size=(128, 128, 128), samples_per_volume=4, augment=True,
                 hu_window=(-1000.0, 400.0), device="cuda"):
        self.images = sorted(glob.glob(os.path.join(root, "images", "*.npy")))
        self.labels = [p.replace("images", "labels") for p in self.images]
        self.patch_size = tuple(patch_size)
        self.samples_per_volume = samples_per_volume
        self.augment = augment
        self.hu_window = hu_window
        self.device = torch.device(device)

    def __len__(self):
        return len(self.images) * self.samples_per_volume

    def _random_crop(self, img, lbl):
        starts = []
        for dim, p in zip(img.shape, self.patch_size):
            starts.append(random.randint(0, max(dim - p, 0)))
        sl = tuple(slice(s, s + p) for s, p in zip(starts, self.patch_size))
        img, lbl = img[sl], lbl[sl]
        pad = [(0, max(p - d, 0)) for d, p in zip(img.shape, self.patch_size)]
        return np.pad(img, pad, constant_values=self.hu_window[0]), np.pad(lbl, pad)

    def __getitem__(self, index):
        vid = index // self.samples_per_volume
        img = np.load(self.images[vid], mmap_mode="r")
        lbl = np.load(self.labels[vid], mmap_mode="r")
        img, lbl = self._random_crop(img, lbl)
        lo, hi = self.hu_window
        img = (np.clip(img, lo, hi) - lo) / (hi - lo)

        img_t = torch.from_numpy(np.ascontiguousarray(img, dtype=np.float32))[None, None]
        lbl_t = torch.from_numpy(np.ascontiguousarray(lbl, dtype=np.float32))[None, None]
        if self.augment:
            img_t = img_t.to(self.device, non_blocking=True)  # leak
            lbl_t = lbl_t.to(self.device, non_blocking=True)
            grid = random_affine_grid(self.patch_size, device=self.device)
            img_t = F.grid_sample(img_t, grid, mode="bilinear", padding_mode="border", align_corners=False)
            lbl_t = F.grid_sample(lbl_t, grid, mode="nearest", padding_mode="zeros", align_corners=False)
            if random.random() < 0.5:
                img_t = img_t + 0.05 * torch.randn_like(img_t)
            for axis in (2, 3, 4):
                if random.random() < 0.5:
                    img_t, lbl_t = img_t.flip(axis), lbl_t.flip(axis)
            img_t, lbl_t = img_t.cpu(), lbl_t.cpu()
        return img_t[0], lbl_t[0, 0].long()


def worker_init_fn(worker_id):
    seed = torch.initial_seed() % 2 ** 32
    np.random.seed(seed + worker_id)
    random.seed(seed + worker_id)


def get_loader(root, batch_size=2, num_workers=6, patch_size=(128, 128, 128)):
    ds = CTPatchDataset(root, patch_size=patch_size)
    return DataLoader(ds, batch_size=batch_size, shuffle=True, num_workers=num_workers,
                      worker_init_fn=worker_init_fn, pin_memory=True, persistent_workers=True,
                      drop_last=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="Inspect augmented CT patches")
    ap.add_argument("root")
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--workers", type=int, default=6)
    args = ap.parse_args()
    loader = get_loader(args.root, num_workers=args.workers)
    for i, (x, y) in enumerate(loader):
        fg = (y > 0).float().mean().item()
        print(f"batch {i}: x {tuple(x.shape)} range [{x.min():.2f}, {x.max():.2f}] fg {fg:.3%}")
        if i + 1 >= args.batches:
            break
