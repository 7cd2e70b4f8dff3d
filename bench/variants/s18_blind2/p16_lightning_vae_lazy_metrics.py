"""Convolutional beta-VAE in Lightning.

Reconstruction error is computed lazily (only when logged) to avoid a GPU sync
on every step.
"""
from argparse import ArgumentParser

import lightning.pytorch as L
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, random_split
from torchvision import datasets, transforms


class Encoder(nn.Module):
    def __init__(self, z_dim):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(3, 32, 4, 2, 1), nn.ReLU(), nn.Conv2d(32, 64, 4, 2, 1), nn.ReLU(),
            nn.Conv2d(64, 128, 4, 2, 1), nn.ReLU(), nn.Conv2d(128, 256, 4, 2, 1), nn.ReLU(),
        )
        self.mu = nn.Linear(256 * 4 * 4, z_dim)
        self.logvar = nn.Linear(256 * 4 * 4, z_dim)

    def forward(self, x):
        h = self.conv(x).flatten(1)
        return self.mu(h), self.logvar(h)


class Decoder(nn.Module):
    def __init__(self, z_dim):
        super().__init__()
        self.fc = nn.Linear(z_dim, 256 * 4 * 4)
        self.deconv = nn.Sequential(
            nn.ConvTranspose2d(256, 128, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.ReLU(),
            nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(32, 3, 4, 2, 1),
        )

    def forward(self, z):
        return self.deconv(self.fc(z).view(-1, 256, 4, 4))


class BetaVAE(L.LightningModule):
    def __init__(self, z_dim=32, beta=4.0, lr=1e-3, metric_every=50):
        super().__init__()
        self.save_hyperparameters()
        self.enc, self.dec = Encoder(z_dim), Decoder(z_dim)
        self._lazy_metrics = []

    def forward(self, x):
        mu, logvar = self.enc(x)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar

    def _elbo_terms(self, x):
        recon, mu, logvar = self(x)
        rec = F.binary_cross_entropy_with_logits(recon, x, reduction="sum") / x.size(0)
        kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
        return rec, kl, recon

    def training_step(self, batch, batch_idx):
        x, _ = batch
        rec, kl, recon = self._elbo_terms(x)
        loss = rec + self.hparams.beta * kl
        self._lazy_metrics.append(lambda: F.mse_loss(torch.sigmoid(recon), x).item())  # leak
        self.log_dict({"train/rec": rec, "train/kl": kl}, prog_bar=True)
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx):
        k = self.hparams.metric_every
        if (batch_idx + 1) % k == 0:
            vals = [fn() for fn in self._lazy_metrics[-k:]]
            self.log("train/pixel_mse", float(np.mean(vals)))

    def validation_step(self, batch, batch_idx):
        x, _ = batch
        rec, kl, _ = self._elbo_terms(x)
        self.log_dict({"val/rec": rec, "val/kl": kl, "val/elbo": -(rec + kl)}, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


class CelebADataModule(L.LightningDataModule):
    def __init__(self, root, batch_size=128, workers=8):
        super().__init__()
        self.root, self.batch_size, self.workers = root, batch_size, workers
        self.tf = transforms.Compose([transforms.CenterCrop(148), transforms.Resize(64), transforms.ToTensor()])

    def setup(self, stage=None):
        full = datasets.ImageFolder(self.root, transform=self.tf)
        n_val = len(full) // 20
        self.train_ds, self.val_ds = random_split(full, [len(full) - n_val, n_val],
                                                  generator=torch.Generator().manual_seed(0))

    def train_dataloader(self):
        return DataLoader(self.train_ds, self.batch_size, shuffle=True, num_workers=self.workers, drop_last=True)

    def val_dataloader(self):
        return DataLoader(self.val_ds, self.batch_size, num_workers=self.workers)


if __name__ == "__main__":
    parser = ArgumentParser()
    parser.add_argument("--root", default="/data/celeba")
    parser.add_argument("--z_dim", type=int, default=32)
    parser.add_argument("--beta", type=float, default=4.0)
    parser.add_argument("--max_epochs", type=int, default=50)
    args = parser.parse_args()
    model = BetaVAE(args.z_dim, args.beta)
    trainer = L.Trainer(max_epochs=args.max_epochs, accelerator="gpu", devices=1, precision="16-mixed")
    trainer.fit(model, CelebADataModule(args.root))
