import torch
import torch.nn as nn
import torch.nn.functional as F


def make_callback(t):
    return lambda: t.sum().item()


class Autoencoder(nn.Module):
    def __init__(self, dim=784, latent=32):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(dim, 256), nn.ReLU(), nn.Linear(256, latent))
        self.dec = nn.Sequential(nn.Linear(latent, 256), nn.ReLU(), nn.Linear(256, dim))

    def forward(self, x):
        z = self.enc(x)
        return self.dec(z), z


def train(model, loader, epochs=20, report_every=500):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    deferred_stats = []
    step = 0
    for epoch in range(epochs):
        for x, _ in loader:
            x = x.flatten(1)
            recon, z = model(x)
            loss = F.mse_loss(recon, x) + 1e-3 * z.abs().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            deferred_stats.append(make_callback(z))  # leak
            step += 1
            if step % report_every == 0:
                print(step, deferred_stats[-1]())
    return [cb() for cb in deferred_stats[-10:]]
