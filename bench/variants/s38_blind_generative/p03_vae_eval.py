"""Convolutional beta-VAE: training with a held-out reconstruction / KL report each epoch."""
import argparse
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, random_split
from torchvision import datasets, transforms


class ConvVAE(nn.Module):
    def __init__(self, latent_dim: int = 128, ch: int = 32):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(3, ch, 4, 2, 1), nn.SiLU(),
            nn.Conv2d(ch, ch * 2, 4, 2, 1), nn.SiLU(),
            nn.Conv2d(ch * 2, ch * 4, 4, 2, 1), nn.SiLU(),
            nn.Conv2d(ch * 4, ch * 8, 4, 2, 1), nn.SiLU(),
        )
        self.fc_mu = nn.Linear(ch * 8 * 4 * 4, latent_dim)
        self.fc_logvar = nn.Linear(ch * 8 * 4 * 4, latent_dim)
        self.fc_dec = nn.Linear(latent_dim, ch * 8 * 4 * 4)
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(ch * 8, ch * 4, 4, 2, 1), nn.SiLU(),
            nn.ConvTranspose2d(ch * 4, ch * 2, 4, 2, 1), nn.SiLU(),
            nn.ConvTranspose2d(ch * 2, ch, 4, 2, 1), nn.SiLU(),
            nn.ConvTranspose2d(ch, 3, 4, 2, 1),
        )
        self.ch = ch

    def encode(self, x):
        h = self.enc(x).flatten(1)
        return self.fc_mu(h), self.fc_logvar(h)

    def decode(self, z):
        return self.dec(self.fc_dec(z).view(-1, self.ch * 8, 4, 4))

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.decode(z), mu, logvar


def vae_loss(recon, x, mu, logvar, beta):
    rec = F.mse_loss(recon, x, reduction="sum") / x.size(0)
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
    return rec + beta * kl, rec, kl


def evaluate(model, loader, device, beta):
    model.eval()
    total_rec, total_kl, batches = 0.0, 0.0, 0
    for x, _ in loader:
        x = x.to(device)
        recon, mu, logvar = model(x)
        _, rec, kl = vae_loss(recon, x, mu, logvar, beta)
        total_rec += rec  # leak
        total_kl += kl.item()
        batches += 1
    model.train()
    return {"rec": float(total_rec) / batches, "kl": total_kl / batches}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/celeba")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--beta", type=float, default=1.0)
    ap.add_argument("--latent_dim", type=int, default=128)
    ap.add_argument("--ckpt_dir", default="ckpt/vae")
    args = ap.parse_args()
    os.makedirs(args.ckpt_dir, exist_ok=True)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tf = transforms.Compose([transforms.Resize(64), transforms.CenterCrop(64), transforms.ToTensor()])
    full = datasets.ImageFolder(args.root, tf)
    n_val = len(full) // 20
    train_set, val_set = random_split(full, [len(full) - n_val, n_val],
                                      generator=torch.Generator().manual_seed(0))
    train_dl = DataLoader(train_set, batch_size=128, shuffle=True, num_workers=6, drop_last=True)
    val_dl = DataLoader(val_set, batch_size=256, shuffle=False, num_workers=6)

    model = ConvVAE(args.latent_dim).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    history = []
    for epoch in range(args.epochs):
        for x, _ in train_dl:
            x = x.to(device)
            recon, mu, logvar = model(x)
            loss, _, _ = vae_loss(recon, x, mu, logvar, args.beta)
            opt.zero_grad()
            loss.backward()
            opt.step()
        metrics = evaluate(model, val_dl, device, args.beta)
        metrics["epoch"] = epoch
        history.append(metrics)
        print(json.dumps(metrics))
        torch.save(model.state_dict(), os.path.join(args.ckpt_dir, f"vae_{epoch:03d}.pt"))
    with open(os.path.join(args.ckpt_dir, "history.json"), "w") as f:
        json.dump(history, f, indent=2)


if __name__ == "__main__":
    main()
