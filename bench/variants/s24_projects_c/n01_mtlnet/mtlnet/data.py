"""NYUv2 multi-task dataset stored as per-frame .npz files."""
import os
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import Dataset

MEAN = torch.tensor([0.485, 0.456, 0.406])[:, None, None]
STD = torch.tensor([0.229, 0.224, 0.225])[:, None, None]


class NYUv2(Dataset):
    """Each file holds image (H,W,3 uint8), seg (H,W), depth (H,W metres), normal (H,W,3)."""

    def __init__(self, root: str, split: str, crop=(288, 384), augment: bool = None):
        self.dir = os.path.join(root, split)
        self.files = sorted(f for f in os.listdir(self.dir) if f.endswith(".npz"))
        self.crop = crop
        self.augment = (split == "train") if augment is None else augment

    def __len__(self):
        return len(self.files)

    def _load(self, idx):
        with np.load(os.path.join(self.dir, self.files[idx])) as d:
            img = torch.from_numpy(d["image"]).permute(2, 0, 1).float() / 255.0
            seg = torch.from_numpy(d["seg"].astype(np.int64))
            depth = torch.from_numpy(d["depth"].astype(np.float32))[None]
            normal = torch.from_numpy(d["normal"].astype(np.float32)).permute(2, 0, 1)
        return img, seg, depth, normal

    def __getitem__(self, idx):
        img, seg, depth, normal = self._load(idx)
        if self.augment:
            scale = random.uniform(1.0, 1.5)
            size = [int(img.shape[1] * scale), int(img.shape[2] * scale)]
            img = F.interpolate(img[None], size=size, mode="bilinear", align_corners=False)[0]
            seg = F.interpolate(seg[None, None].float(), size=size, mode="nearest")[0, 0].long()
            depth = F.interpolate(depth[None], size=size, mode="nearest")[0] / scale
            normal = F.interpolate(normal[None], size=size, mode="nearest")[0]
            top = random.randint(0, size[0] - self.crop[0])
            left = random.randint(0, size[1] - self.crop[1])
            sl = (slice(top, top + self.crop[0]), slice(left, left + self.crop[1]))
            img, seg, depth, normal = img[(slice(None),) + sl], seg[sl], depth[(slice(None),) + sl], normal[(slice(None),) + sl]
            if random.random() < 0.5:
                img, seg, depth, normal = img.flip(-1), seg.flip(-1), depth.flip(-1), normal.flip(-1)
                normal[0] = -normal[0]
        return {"image": (img - MEAN) / STD, "seg": seg, "depth": depth, "normal": normal}
