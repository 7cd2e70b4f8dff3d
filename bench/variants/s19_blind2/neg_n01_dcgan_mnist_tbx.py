# -*- coding: utf-8 -*-
"""
DCGAN on MNIST, logging to tensorboardX.
Loosely follows the official DCGAN tutorial, with the training loop split
into functions so it can be imported from the notebook.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torchvision.utils as vutils
from torchvision import datasets, transforms
from tensorboardX import SummaryWriter


def get_args():
    p = argparse.ArgumentParser(description='DCGAN MNIST')
    p.add_argument('--epochs', type=int, default=20)
    p.add_argument('--batch-size', type=int, default=128)
    p.add_argument('--nz', type=int, default=100)
    p.add_argument('--lr', type=float, default=2e-4)
    p.add_argument('--logdir', type=str, default='runs/dcgan_mnist')
    p.add_argument('--no-cuda', action='store_true', default=False)
    return p.parse_args()


class Generator(nn.Module):
    def __init__(self, nz=100, ngf=64):
        super(Generator, self).__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 3, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False),
            nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, ndf=64):
        super(Discriminator, self).__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 7, 1, 0, bias=False),
            nn.Sigmoid())

    def forward(self, x):
        return self.net(x).view(-1)


def train_epoch(epoch, netG, netD, loader, optG, optD, criterion, device, nz, writer, history):
    netG.train()
    netD.train()
    t0 = time.time()
    for i, (imgs, _) in enumerate(loader):
        imgs = imgs.to(device, non_blocking=True)
        b = imgs.size(0)
        ones = torch.ones(b, device=device)
        zeros = torch.zeros(b, device=device)

        # --- discriminator ---
        netD.zero_grad()
        out_real = netD(imgs)
        errD_real = criterion(out_real, ones)
        z = torch.randn(b, nz, 1, 1, device=device)
        fake = netG(z)
        out_fake = netD(fake.detach())
        errD_fake = criterion(out_fake, zeros)
        errD = errD_real + errD_fake
        errD.backward()
        optD.step()

        # --- generator ---
        netG.zero_grad()
        errG = criterion(netD(fake), ones)
        errG.backward()
        optG.step()

        history['G'].append(errG.item())
        history['D'].append(errD.item())

        step = epoch * len(loader) + i
        if i % 50 == 0:
            writer.add_scalar('loss/D', history['D'][-1], step)
            writer.add_scalar('loss/G', history['G'][-1], step)
            writer.add_scalar('D(x)', out_real.mean().item(), step)
            print('Epoch [%d] Iter [%d/%d] Loss_D: %.4f Loss_G: %.4f (%.1fs)'
                  % (epoch, i, len(loader), history['D'][-1], history['G'][-1], time.time() - t0))


def main():
    args = get_args()
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    device = torch.device('cuda' if use_cuda else 'cpu')
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
    loader = torch.utils.data.DataLoader(
        datasets.MNIST('./data', train=True, download=True, transform=tf),
        batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=use_cuda)

    netG = Generator(args.nz).to(device)
    netD = Discriminator().to(device)
    criterion = nn.BCELoss()
    optG = optim.Adam(netG.parameters(), lr=args.lr, betas=(0.5, 0.999))
    optD = optim.Adam(netD.parameters(), lr=args.lr, betas=(0.5, 0.999))
    writer = SummaryWriter(args.logdir)
    fixed_z = torch.randn(64, args.nz, 1, 1, device=device)
    history = {'G': [], 'D': []}

    for epoch in range(args.epochs):
        train_epoch(epoch, netG, netD, loader, optG, optD, criterion, device,
                    args.nz, writer, history)
        with torch.no_grad():
            samples = netG(fixed_z).cpu()
        writer.add_image('samples', vutils.make_grid(samples, normalize=True), epoch)
        torch.save({'G': netG.state_dict(), 'D': netD.state_dict()},
                   os.path.join(args.logdir, 'ckpt_%03d.pth' % epoch))

    np.save(os.path.join(args.logdir, 'losses.npy'),
            np.array([history['G'], history['D']]))
    writer.close()


if __name__ == '__main__':
    main()
