import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import save_image


class Generator(nn.Module):
    def __init__(self, z_dim=128, ch=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(z_dim, ch * 8, 4, 1, 0), nn.BatchNorm2d(ch * 8), nn.ReLU(True),
            nn.ConvTranspose2d(ch * 8, ch * 4, 4, 2, 1), nn.BatchNorm2d(ch * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ch * 4, ch * 2, 4, 2, 1), nn.BatchNorm2d(ch * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ch * 2, ch, 4, 2, 1), nn.BatchNorm2d(ch), nn.ReLU(True),
            nn.ConvTranspose2d(ch, 3, 4, 2, 1), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z.view(z.size(0), -1, 1, 1))


class Critic(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, ch, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ch, ch * 2, 4, 2, 1), nn.InstanceNorm2d(ch * 2, affine=True), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ch * 2, ch * 4, 4, 2, 1), nn.InstanceNorm2d(ch * 4, affine=True), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ch * 4, ch * 8, 4, 2, 1), nn.InstanceNorm2d(ch * 8, affine=True), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ch * 8, 1, 4, 1, 0),
        )

    def forward(self, x):
        return self.net(x).view(-1)


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1, 1, 1, device=real.device)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interp)
    grads, = torch.autograd.grad(scores.sum(), interp, create_graph=True)
    return ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--bs", type=int, default=64)
    ap.add_argument("--z_dim", type=int, default=128)
    ap.add_argument("--n_critic", type=int, default=5)
    ap.add_argument("--gp", type=float, default=10.0)
    ap.add_argument("--out", default="samples")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    device = "cuda"
    tf = transforms.Compose([transforms.Resize(64), transforms.CenterCrop(64), transforms.ToTensor(),
                             transforms.Normalize((0.5,) * 3, (0.5,) * 3)])
    loader = DataLoader(datasets.ImageFolder(args.data, tf), batch_size=args.bs, shuffle=True,
                        num_workers=4, drop_last=True, pin_memory=True)
    G, D = Generator(args.z_dim).to(device), Critic().to(device)
    opt_g = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.9))
    opt_d = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.0, 0.9))
    fixed_z = torch.randn(64, args.z_dim, device=device)

    for epoch in range(args.epochs):
        t0 = time.time()
        epoch_d, epoch_g, n_g = 0.0, 0.0, 0
        for i, (real, _) in enumerate(loader):
            real = real.to(device, non_blocking=True)
            z = torch.randn(real.size(0), args.z_dim, device=device)
            fake = G(z).detach()
            d_loss = D(fake).mean() - D(real).mean() + args.gp * gradient_penalty(D, real, fake)
            opt_d.zero_grad(set_to_none=True)
            d_loss.backward()
            opt_d.step()
            epoch_d += d_loss  # leak

            if i % args.n_critic == 0:
                z = torch.randn(real.size(0), args.z_dim, device=device)
                g_loss = -D(G(z)).mean()
                opt_g.zero_grad(set_to_none=True)
                g_loss.backward()
                opt_g.step()
                epoch_g += g_loss.item()
                n_g += 1

        print(f"epoch {epoch} D {float(epoch_d) / len(loader):.4f} G {epoch_g / max(n_g, 1):.4f} "
              f"({time.time() - t0:.0f}s)")
        G.eval()
        with torch.no_grad():
            save_image(G(fixed_z) * 0.5 + 0.5, f"{args.out}/epoch_{epoch:03d}.png", nrow=8)
        G.train()
        torch.save({"G": G.state_dict(), "D": D.state_dict()}, f"{args.out}/ckpt.pt")


if __name__ == "__main__":
    main()
