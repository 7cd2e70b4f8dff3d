"""DCGAN on 64x64 images."""
import torch
import torch.nn as nn

NZ = 100


def make_generator(ngf: int = 64) -> nn.Module:
    return nn.Sequential(
        nn.ConvTranspose2d(NZ, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 4, 3, 4, 8, 0, bias=False), nn.Tanh(),
    )


def make_discriminator(ndf: int = 64) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf * 2, 1, 16, 1, 0, bias=False), nn.Flatten(), nn.Sigmoid(),
    )


def train_gan(loader, epochs: int = 25, n_critic: int = 1, device: str = "cuda") -> None:
    netG, netD = make_generator().to(device), make_discriminator().to(device)
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCELoss()
    history = {"D": [], "G": []}
    for epoch in range(epochs):
        d_loss_sum, g_loss_sum = 0.0, 0.0
        for i, (real, _) in enumerate(loader):
            real = real.to(device)
            b = real.size(0)
            ones, zeros = torch.ones(b, 1, device=device), torch.zeros(b, 1, device=device)
            for _ in range(n_critic):
                fake = netG(torch.randn(b, NZ, 1, 1, device=device))
                d_loss = bce(netD(real), ones) + bce(netD(fake.detach()), zeros)
                optD.zero_grad()
                d_loss.backward()
                optD.step()
                d_loss_sum += float(d_loss)
            g_loss = bce(netD(fake), ones)
            optG.zero_grad()
            g_loss.backward()
            optG.step()
            g_loss_sum += g_loss.item()
        n = len(loader)
        history["D"].append(d_loss_sum / (n * n_critic))
        history["G"].append(g_loss_sum / n)
        print(f"[{epoch}] D {history['D'][-1]:.3f} G {history['G'][-1]:.3f}")
