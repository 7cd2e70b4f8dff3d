"""DCGAN/StyleGAN-lite trainer with non-saturating loss and R1 penalty."""
from collections import defaultdict

import torch
import torch.nn.functional as F
from torch import autograd


class GANTrainer:
    def __init__(self, G, D, loader, z_dim=128, lr=2e-4, r1_gamma=10.0, r1_every=16, device="cuda"):
        self.G, self.D = G.to(device), D.to(device)
        self.loader = loader
        self.z_dim = z_dim
        self.device = device
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=lr, betas=(0.0, 0.99))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=lr, betas=(0.0, 0.99))
        self.r1_gamma, self.r1_every = r1_gamma, r1_every
        self.logs = defaultdict(list)
        self.step = 0

    def _noise(self, n):
        return torch.randn(n, self.z_dim, device=self.device)

    def d_step(self, real):
        real = real.requires_grad_(self.step % self.r1_every == 0)
        with torch.no_grad():
            fake = self.G(self._noise(real.size(0)))
        real_logits = self.D(real)
        fake_logits = self.D(fake)
        d_loss = F.softplus(fake_logits).mean() + F.softplus(-real_logits).mean()
        stats = {"d_loss": d_loss, "d_real": real_logits.mean(), "d_fake": fake_logits.mean()}
        if real.requires_grad:
            (grad,) = autograd.grad(real_logits.sum(), real, create_graph=True)
            r1 = grad.pow(2).flatten(1).sum(1).mean()
            d_loss = d_loss + 0.5 * self.r1_gamma * self.r1_every * r1
            stats["r1"] = r1
        self.opt_d.zero_grad(set_to_none=True)
        d_loss.backward()
        self.opt_d.step()
        return stats

    def g_step(self, batch_size):
        fake = self.G(self._noise(batch_size))
        g_loss = F.softplus(-self.D(fake)).mean()
        self.opt_g.zero_grad(set_to_none=True)
        g_loss.backward()
        self.opt_g.step()
        return {"g_loss": g_loss}

    def _record(self, stats):
        for key, value in stats.items():
            self.logs[key].append(value.item())

    def _print(self, every):
        parts = []
        for key, values in self.logs.items():
            recent = values[-every:]
            parts.append(f"{key}={sum(recent) / len(recent):.4f}")
        print(f"[{self.step}] " + " ".join(parts))

    def train(self, epochs, print_every=100):
        for epoch in range(epochs):
            for real, _ in self.loader:
                real = real.to(self.device, non_blocking=True)
                self._record(self.d_step(real))
                self._record(self.g_step(real.size(0)))
                self.step += 1
                if self.step % print_every == 0:
                    self._print(print_every)
            torch.save({"G": self.G.state_dict(), "D": self.D.state_dict()}, f"ckpt_{epoch:03d}.pt")
            self.logs.clear()
