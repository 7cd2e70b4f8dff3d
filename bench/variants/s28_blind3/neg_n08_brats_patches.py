"""BraTS patch dataset and sliding-window validation for a 3D U-Net."""
import json
import logging
import os

import nibabel as nib
import numpy as np
import torch
import torch.nn.functional as F
from monai.inferers import sliding_window_inference
from monai.metrics import DiceMetric
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger(__name__)

MODALITIES = ("t1", "t1ce", "t2", "flair")


def zscore(vol: torch.Tensor) -> torch.Tensor:
    mask = vol > 0
    mean, std = vol[mask].mean(), vol[mask].std().clamp_min(1e-6)
    return torch.where(mask, (vol - mean) / std, torch.zeros_like(vol))


class BraTSPatchDataset(Dataset):
    def __init__(self, root, split_file, split="train", patch=(128, 128, 128),
                 spacing_zoom=1.0, fg_prob=0.33):
        with open(split_file) as f:
            self.cases = json.load(f)[split]
        self.root = root
        self.patch = patch
        self.zoom = spacing_zoom
        self.fg_prob = fg_prob

    def __len__(self):
        return len(self.cases)

    def _load(self, case):
        vols = [nib.load(os.path.join(self.root, case, f"{case}_{m}.nii.gz")).get_fdata(dtype=np.float32)
                for m in MODALITIES]
        seg = nib.load(os.path.join(self.root, case, f"{case}_seg.nii.gz")).get_fdata(dtype=np.float32)
        return np.stack(vols), seg

    def _crop(self, img, seg):
        _, D, H, W = img.shape
        pd, ph, pw = self.patch
        if np.random.rand() < self.fg_prob and (seg > 0).any():
            z, y, x = np.argwhere(seg.cpu().numpy() > 0)[np.random.randint((seg > 0).sum().item())]
        else:
            z, y, x = np.random.randint(D), np.random.randint(H), np.random.randint(W)
        z0 = int(np.clip(z - pd // 2, 0, max(D - pd, 0)))
        y0 = int(np.clip(y - ph // 2, 0, max(H - ph, 0)))
        x0 = int(np.clip(x - pw // 2, 0, max(W - pw, 0)))
        return img[:, z0:z0 + pd, y0:y0 + ph, x0:x0 + pw], seg[z0:z0 + pd, y0:y0 + ph, x0:x0 + pw]

    def __getitem__(self, i):
        img_np, seg_np = self._load(self.cases[i])
        img = torch.from_numpy(img_np)
        seg = torch.from_numpy(seg_np)
        if self.zoom != 1.0:
            img = F.interpolate(img[None], scale_factor=self.zoom, mode="trilinear", align_corners=False)[0]
            seg = F.interpolate(seg[None, None], scale_factor=self.zoom, mode="nearest")[0, 0]
        img = torch.stack([zscore(c) for c in img])
        img, seg = self._crop(img, seg)
        # BraTS labels -> (TC, WT, ET) channels
        target = torch.stack([(seg == 1) | (seg == 4), seg > 0, seg == 4]).float()
        return {"image": img.contiguous(), "label": target.contiguous()}


def make_loader(cfg, split="train"):
    ds = BraTSPatchDataset(cfg["root"], cfg["split_file"], split, tuple(cfg["patch"]), cfg.get("zoom", 1.0))
    return DataLoader(ds, batch_size=cfg["batch_size"], shuffle=split == "train",
                      num_workers=cfg.get("num_workers", 8), persistent_workers=True, drop_last=True,
                      pin_memory=True)


def prepare_batch(batch, device="cuda"):
    return batch["image"].to(device, non_blocking=True), batch["label"].to(device, non_blocking=True)


@torch.no_grad()
def validate(model, val_cases, roi=(128, 128, 128), sw_batch_size=4, overlap=0.5):
    model.eval()
    dice = DiceMetric(include_background=True, reduction="mean_batch")
    for case in val_cases:
        image = case["image"].unsqueeze(0).cuda(non_blocking=True)
        label = case["label"].unsqueeze(0).cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = sliding_window_inference(image, roi, sw_batch_size, model, overlap=overlap, mode="gaussian")
        dice(y_pred=(torch.sigmoid(logits) > 0.5).float(), y=label)
    per_region = dice.aggregate().cpu().tolist()
    dice.reset()
    model.train()
    log.info("val dice TC %.4f WT %.4f ET %.4f", *per_region)
    return sum(per_region) / len(per_region)
