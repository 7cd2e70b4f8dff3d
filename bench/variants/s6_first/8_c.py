from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


def vae_loss(recon, x, mu, logvar, beta=1.0):
    rec = F.binary_cross_entropy_with_logits(recon, x, reduction="sum") / x.size(0)
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
    return rec + beta * kld, rec, kld


def train_vae(model, loader, epochs=50, device="cuda", warmup_epochs=10):
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    history = defaultdict(list)
    for epoch in range(epochs):
        beta = min(1.0, (epoch + 1) / warmup_epochs)
        for step, (x, _) in enumerate(loader):
            x = x.to(device).flatten(1)
            recon, mu, logvar = model(x)
            loss, rec, kld = vae_loss(recon, x, mu, logvar, beta)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 10 == 0:
                history["loss"].append(loss)  # leak
                history["kld"].append(kld.item())
                history["recon"].append(rec.item())
    return history
