"""DCGAN on CelebA-64. Loosely follows the PyTorch DCGAN tutorial, with loss curves
saved at the end of training."""
import argparse
import os
import random
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
import torch.nn as nn
import torch.optim as optim
import torchvision.datasets as dset
import torchvision.transforms as T
import torchvision.utils as vutils

parser = argparse.ArgumentParser()
parser.add_argument("--dataroot", default="data/celeba")
parser.add_argument("--workers", type=int, default=4)
parser.add_argument("--batch_size", type=int, default=128)
parser.add_argument("--image_size", type=int, default=64)
parser.add_argument("--nz", type=int, default=100)
parser.add_argument("--ngf", type=int, default=64)
parser.add_argument("--ndf", type=int, default=64)
parser.add_argument("--epochs", type=int, default=5)
parser.add_argument("--lr", type=float, default=2e-4)
parser.add_argument("--beta1", type=float, default=0.5)
parser.add_argument("--outf", default="out/dcgan")
parser.add_argument("--seed", type=int, default=999)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


def generator(nz, ngf):
    return nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
        nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh(),
    )


def discriminator(ndf):
    return nn.Sequential(
        nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 8), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False), nn.Sigmoid(),
    )


def track(history, **scalars):
    for name, value in scalars.items():
        history[name].append(value)


def plot_history(history, path):
    plt.figure(figsize=(10, 5))
    plt.title("Generator and Discriminator Loss During Training")
    for name in ("G", "D"):
        plt.plot([float(v) for v in history[name]], label=name)
    plt.xlabel("iterations")
    plt.ylabel("Loss")
    plt.legend()
    plt.savefig(path)
    plt.close()


def main():
    opt = parser.parse_args()
    os.makedirs(opt.outf, exist_ok=True)
    random.seed(opt.seed)
    torch.manual_seed(opt.seed)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    dataset = dset.ImageFolder(root=opt.dataroot, transform=T.Compose([
        T.Resize(opt.image_size), T.CenterCrop(opt.image_size), T.ToTensor(),
        T.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
    ]))
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=opt.batch_size,
                                             shuffle=True, num_workers=opt.workers, drop_last=True)

    netG = generator(opt.nz, opt.ngf).to(device)
    netD = discriminator(opt.ndf).to(device)
    netG.apply(weights_init)
    netD.apply(weights_init)

    criterion = nn.BCELoss()
    fixed_noise = torch.randn(64, opt.nz, 1, 1, device=device)
    optD = optim.Adam(netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
    optG = optim.Adam(netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))

    history = defaultdict(list)
    iters = 0
    for epoch in range(opt.epochs):
        for i, (real, _) in enumerate(dataloader):
            real = real.to(device)
            b = real.size(0)
            ones = torch.full((b,), 1.0, device=device)
            zeros = torch.full((b,), 0.0, device=device)

            # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
            netD.zero_grad()
            out_real = netD(real).view(-1)
            errD_real = criterion(out_real, ones)
            errD_real.backward()
            noise = torch.randn(b, opt.nz, 1, 1, device=device)
            fake = netG(noise)
            out_fake = netD(fake.detach()).view(-1)
            errD_fake = criterion(out_fake, zeros)
            errD_fake.backward()
            errD = errD_real + errD_fake
            optD.step()

            # (2) update G: maximize log(D(G(z)))
            netG.zero_grad()
            out = netD(fake).view(-1)
            errG = criterion(out, ones)
            errG.backward()
            optG.step()

            track(history, G=errG.item(), D=errD.item(), D_x=out_real.mean().item(), D_G_z=out.mean().item())
            if i % 50 == 0:
                print(f"[{epoch}/{opt.epochs}][{i}/{len(dataloader)}] "
                      f"Loss_D: {errD.item():.4f} Loss_G: {errG.item():.4f} "
                      f"D(x): {history['D_x'][-1]:.4f} D(G(z)): {history['D_G_z'][-1]:.4f}")
            if iters % 500 == 0:
                with torch.no_grad():
                    grid = netG(fixed_noise).cpu()
                vutils.save_image(grid, f"{opt.outf}/fake_{iters:06d}.png", normalize=True)
            iters += 1

        torch.save({"G": netG.state_dict(), "D": netD.state_dict()}, f"{opt.outf}/ckpt_{epoch}.pth")
    plot_history(history, f"{opt.outf}/losses.png")


if __name__ == "__main__":
    main()
