import json
from pathlib import Path

import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self, x_dim=784, h_dim=400, z_dim=20):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(x_dim, h_dim), nn.ReLU())
        self.mu = nn.Linear(h_dim, z_dim)
        self.logvar = nn.Linear(h_dim, z_dim)
        self.dec = nn.Sequential(nn.Linear(z_dim, h_dim), nn.ReLU(), nn.Linear(h_dim, x_dim))

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(z), mu, logvar


def elbo_loss(recon_logits, x, mu, logvar):
    bce = nn.functional.binary_cross_entropy_with_logits(recon_logits, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (bce + kld) / x.size(0)


def train(model, loader, total_steps, out_dir="runs/vae"):
    device = next(model.parameters()).device
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_hist = [None] * total_steps
    step = 0
    while step < total_steps:
        for x, _ in loader:
            if step >= total_steps:
                break
            x = x.view(x.size(0), -1).to(device)
            recon, mu, logvar = model(x)
            loss = elbo_loss(recon, x, mu, logvar)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_hist[step] = loss.item()
            step += 1
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    with open(Path(out_dir) / "loss.json", "w") as f:
        json.dump([v for v in loss_hist if v is not None], f)
    return model
