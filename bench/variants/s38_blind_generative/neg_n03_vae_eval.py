"""Evaluation helpers for the VAE experiments (ELBO, reconstruction, active units)."""
from typing import Dict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


def gaussian_kl(mu: torch.Tensor, logvar: torch.Tensor) -> torch.Tensor:
    return -0.5 * (1 + logvar - mu.pow(2) - logvar.exp())


class VAEEvaluator:
    def __init__(self, model: nn.Module, loader: DataLoader, device: torch.device,
                 beta: float = 1.0, au_threshold: float = 1e-2):
        self.model = model
        self.loader = loader
        self.device = device
        self.beta = beta
        self.au_threshold = au_threshold

    @torch.inference_mode()
    def run(self) -> Dict[str, float]:
        was_training = self.model.training
        self.model.eval()
        total_rec = torch.zeros((), device=self.device)
        total_kl = torch.zeros((), device=self.device)
        mu_sum = None
        mu_sq_sum = None
        n = 0
        for batch in self.loader:
            x = batch[0] if isinstance(batch, (list, tuple)) else batch
            x = x.to(self.device, non_blocking=True)
            mu, logvar = self.model.encode(x)
            recon = self.model.decode(mu)
            total_rec += F.mse_loss(recon, x, reduction="sum")
            total_kl += gaussian_kl(mu, logvar).sum()
            if mu_sum is None:
                mu_sum = torch.zeros(mu.size(1), device=self.device, dtype=torch.float64)
                mu_sq_sum = torch.zeros_like(mu_sum)
            mu_sum += mu.double().sum(0)
            mu_sq_sum += mu.double().pow(2).sum(0)
            n += x.size(0)
        if was_training:
            self.model.train()
        mean = mu_sum / n
        var = mu_sq_sum / n - mean.pow(2)
        active_units = int((var > self.au_threshold).sum().item())
        rec = total_rec.item() / n
        kl = total_kl.item() / n
        return {
            "rec": rec,
            "kl": kl,
            "neg_elbo": rec + self.beta * kl,
            "active_units": active_units,
        }


def reconstruction_grid(model: nn.Module, x: torch.Tensor, n: int = 8) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        mu, _ = model.encode(x[:n])
        recon = model.decode(mu).clamp(0, 1)
    model.train()
    return torch.cat([x[:n], recon], dim=0).cpu()


if __name__ == "__main__":
    import argparse

    from torchvision import datasets, transforms

    from vae_model import ConvVAE

    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--root", default="data/celeba_val")
    args = ap.parse_args()
    dev = torch.device("cuda")
    model = ConvVAE().to(dev)
    model.load_state_dict(torch.load(args.ckpt, map_location=dev))
    tf = transforms.Compose([transforms.Resize(64), transforms.CenterCrop(64), transforms.ToTensor()])
    dl = DataLoader(datasets.ImageFolder(args.root, tf), batch_size=256, num_workers=4, pin_memory=True)
    print(VAEEvaluator(model, dl, dev).run())
