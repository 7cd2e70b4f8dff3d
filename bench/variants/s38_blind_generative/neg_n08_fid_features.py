"""FID evaluation: Inception pool features accumulated into running first/second moments."""
import argparse
from typing import Callable, Iterable, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy import linalg
from torchvision.models import Inception_V3_Weights, inception_v3


class InceptionPool(nn.Module):
    def __init__(self):
        super().__init__()
        net = inception_v3(weights=Inception_V3_Weights.IMAGENET1K_V1, aux_logits=True)
        net.fc = nn.Identity()
        self.net = net.eval()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.interpolate(x, size=(299, 299), mode="bilinear", align_corners=False)
        return self.net((x - self.mean) / self.std)


class RunningStats:
    def __init__(self, dim: int = 2048):
        self.n = 0
        self.sum = np.zeros(dim, dtype=np.float64)
        self.outer = np.zeros((dim, dim), dtype=np.float64)

    def update(self, feats: torch.Tensor):
        f = feats.double().cpu().numpy()
        self.n += f.shape[0]
        self.sum += f.sum(0)
        self.outer += f.T @ f

    def finalize(self) -> Tuple[np.ndarray, np.ndarray]:
        mu = self.sum / self.n
        cov = (self.outer - self.n * np.outer(mu, mu)) / (self.n - 1)
        return mu, cov


def frechet_distance(mu1, cov1, mu2, cov2) -> float:
    diff = mu1 - mu2
    covmean, _ = linalg.sqrtm(cov1 @ cov2, disp=False)
    if np.iscomplexobj(covmean):
        covmean = covmean.real
    return float(diff @ diff + np.trace(cov1) + np.trace(cov2) - 2 * np.trace(covmean))


@torch.inference_mode()
def stats_from_images(extractor: InceptionPool, batches: Iterable[torch.Tensor], device) -> RunningStats:
    stats = RunningStats()
    for x in batches:
        stats.update(extractor(x.to(device, non_blocking=True).float()))
    return stats


@torch.inference_mode()
def stats_from_generator(extractor: InceptionPool, sample_fn: Callable[[int], torch.Tensor],
                         num_samples: int, batch_size: int) -> RunningStats:
    stats = RunningStats()
    done = 0
    while done < num_samples:
        b = min(batch_size, num_samples - done)
        imgs = sample_fn(b).clamp(0, 1)
        stats.update(extractor(imgs))
        done += b
    return stats


def compute_fid(extractor, real_loader, sample_fn, num_samples=10000, batch_size=100,
                device="cuda", real_cache: Optional[str] = None) -> float:
    if real_cache is not None:
        cached = np.load(real_cache)
        mu_r, cov_r = cached["mu"], cached["cov"]
    else:
        mu_r, cov_r = stats_from_images(extractor, (b[0] for b in real_loader), device).finalize()
    mu_f, cov_f = stats_from_generator(extractor, sample_fn, num_samples, batch_size).finalize()
    return frechet_distance(mu_r, cov_r, mu_f, cov_f)


if __name__ == "__main__":
    from torch.utils.data import DataLoader
    from torchvision import datasets, transforms

    ap = argparse.ArgumentParser()
    ap.add_argument("--real", required=True)
    ap.add_argument("--out", default="real_stats.npz")
    args = ap.parse_args()
    ext = InceptionPool().cuda()
    tf = transforms.Compose([transforms.Resize(299), transforms.CenterCrop(299), transforms.ToTensor()])
    dl = DataLoader(datasets.ImageFolder(args.real, tf), batch_size=100,
                    num_workers=8, pin_memory=True)
    mu, cov = stats_from_images(ext, (b[0] for b in dl), "cuda").finalize()
    np.savez(args.out, mu=mu, cov=cov)
