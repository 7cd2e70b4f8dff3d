"""Intensity and spatial transforms for CT volumes (C, D, H, W tensors)."""
import random
from typing import Callable, Dict, List, Sequence

import torch
import torch.nn.functional as F

Sample = Dict[str, torch.Tensor]


def clip_and_normalize(volume: torch.Tensor, lower_pct: float = 0.5, upper_pct: float = 99.5,
                       hu_window: Sequence[float] = (-1000.0, 1000.0)) -> torch.Tensor:
    """Window to HU range, clip to percentiles of the foreground and z-score.

    torch.quantile on ~30M voxels is painfully slow on CPU, so the statistics are
    computed on the GPU when one is present.
    """
    v = volume.float().clamp(*hu_window)
    if torch.cuda.is_available():
        v = v.cuda(non_blocking=True)  # leak
    fg = v[v > hu_window[0] + 1.0]
    if fg.numel() > 16_000_000:
        idx = torch.randint(0, fg.numel(), (16_000_000,), device=fg.device)
        fg = fg[idx]
    lo = torch.quantile(fg, lower_pct / 100.0)
    hi = torch.quantile(fg, upper_pct / 100.0)
    v = v.clamp(lo, hi)
    v = (v - fg.clamp(lo, hi).mean()) / (fg.clamp(lo, hi).std() + 1e-6)
    return v.cpu()


def resample_spacing(volume: torch.Tensor, spacing: Sequence[float], target: Sequence[float],
                     mode: str = "trilinear") -> torch.Tensor:
    scale = [s / t for s, t in zip(spacing, target)]
    size = [max(1, int(round(d * s))) for d, s in zip(volume.shape[-3:], scale)]
    align = False if mode == "trilinear" else None
    out = F.interpolate(volume[None], size=size, mode=mode, align_corners=align)
    return out[0]


class Compose:
    def __init__(self, transforms: List[Callable[[Sample], Sample]]):
        self.transforms = transforms

    def __call__(self, sample: Sample) -> Sample:
        for t in self.transforms:
            sample = t(sample)
        return sample


class RandSpatialCrop3D:
    """Random crop biased towards foreground with probability pos_ratio."""

    def __init__(self, roi_size: Sequence[int] = (96, 96, 96), pos_ratio: float = 0.67):
        self.roi = tuple(roi_size)
        self.pos_ratio = pos_ratio

    def _pad(self, x: torch.Tensor) -> torch.Tensor:
        pads = []
        for dim, r in zip(reversed(x.shape[-3:]), reversed(self.roi)):
            extra = max(0, r - dim)
            pads += [extra // 2, extra - extra // 2]
        return F.pad(x, pads) if any(pads) else x

    def __call__(self, sample: Sample) -> Sample:
        img, lbl = self._pad(sample["image"]), self._pad(sample["label"])
        D, H, W = img.shape[-3:]
        if random.random() < self.pos_ratio and (lbl > 0).any():
            fg = (lbl[0] > 0).nonzero()
            c = fg[random.randrange(fg.shape[0])].tolist()
        else:
            c = [random.randrange(D), random.randrange(H), random.randrange(W)]
        start = [min(max(ci - r // 2, 0), s - r) for ci, r, s in zip(c, self.roi, (D, H, W))]
        sl = tuple(slice(s, s + r) for s, r in zip(start, self.roi))
        sample["image"] = img[(slice(None),) + sl]
        sample["label"] = lbl[(slice(None),) + sl]
        return sample


class RandFlip3D:
    def __init__(self, prob: float = 0.5, axes: Sequence[int] = (1, 2, 3)):
        self.prob = prob
        self.axes = axes

    def __call__(self, sample: Sample) -> Sample:
        for ax in self.axes:
            if random.random() < self.prob:
                sample["image"] = sample["image"].flip(ax)
                sample["label"] = sample["label"].flip(ax)
        return sample
