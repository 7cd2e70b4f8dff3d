import os

import numpy as np
import torch
from PIL import Image
from torch.utils.data import Dataset


MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


class SatelliteTiles(Dataset):
    """Multi-spectral tile dataset for land-cover segmentation."""

    def __init__(self, root, split="train", tile=256):
        self.img_dir = os.path.join(root, split, "images")
        self.mask_dir = os.path.join(root, split, "masks")
        self.names = sorted(os.listdir(self.img_dir))
        self.tile = tile
        self.train = split == "train"

    def __len__(self):
        return len(self.names)

    def _load(self, name):
        img = np.asarray(Image.open(os.path.join(self.img_dir, name)).convert("RGB"), dtype=np.float32) / 255.0
        mask = np.asarray(Image.open(os.path.join(self.mask_dir, name)), dtype=np.int64)
        return img, mask

    def _augment(self, img, mask):
        if torch.rand(()) < 0.5:
            img, mask = img.flip(-1), mask.flip(-1)
        if torch.rand(()) < 0.5:
            img, mask = img.flip(-2), mask.flip(-2)
        k = int(torch.randint(0, 4, ()))
        return torch.rot90(img, k, (-2, -1)), torch.rot90(mask, k, (-2, -1))

    def __getitem__(self, idx):
        img, mask = self._load(self.names[idx])
        img = torch.from_numpy(img).permute(2, 0, 1).cuda()  # leak
        mask = torch.from_numpy(mask).to(img.device)
        img = (img - MEAN.to(img.device)) / STD.to(img.device)
        if self.train:
            img, mask = self._augment(img, mask)
        return img, mask
