import argparse
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from logger import DeferredLogger

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")


class VAE(nn.Module):
    def __init__(self, in_dim: int = 784, hidden: int = 400, latent: int = 20) -> None:
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden)
        self.fc_mu = nn.Linear(hidden, latent)
        self.fc_logvar = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, in_dim)

    def encode(self, x):
        h = F.relu(self.fc1(x))
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.flatten(1))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def vae_loss(recon_x, x, mu, logvar, beta: float = 1.0):
    bce = F.binary_cross_entropy(recon_x, x.flatten(1), reduction="sum") / x.size(0)
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
    return bce + beta * kld, bce, kld


def main() -> None:
    parser = argparse.ArgumentParser(description="VAE")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--beta-warmup", type=int, default=5000)
    parser.add_argument("--logdir", type=str, default="runs")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = TensorDataset(torch.rand(60000, 1, 28, 28))
    loader = DataLoader(data, batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = VAE().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    with DeferredLogger(args.logdir, "vae") as tb:
        tb.text(f"config: {vars(args)}")
        step = 0
        for epoch in range(args.epochs):
            model.train()
            for (x,) in loader:
                x = x.to(device)
                beta = min(1.0, step / args.beta_warmup)
                recon, mu, logvar = model(x)
                loss, bce, kld = vae_loss(recon, x, mu, logvar, beta)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

                tb.scalars({"loss": loss, "recon": bce, "kl": kld, "beta": beta}, step, prefix="train/")
                step += 1
            tb.flush()
            logging.info("epoch %d done (%d steps)", epoch, step)
            torch.save(model.state_dict(), f"{tb.log_dir}/vae_{epoch:03d}.pt")


if __name__ == "__main__":
    main()
