import argparse

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

from tb_logger import TensorboardLogger

parser = argparse.ArgumentParser()
parser.add_argument('--niter', type=int, default=25)
parser.add_argument('--batchSize', type=int, default=64)
parser.add_argument('--nz', type=int, default=100)
parser.add_argument('--ngf', type=int, default=64)
parser.add_argument('--ndf', type=int, default=64)
parser.add_argument('--lr', type=float, default=0.0002)
parser.add_argument('--beta1', type=float, default=0.5)
parser.add_argument('--logdir', default='runs/dcgan')
opt = parser.parse_args()

device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
nz, ngf, ndf = opt.nz, opt.ngf, opt.ndf


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


netG = nn.Sequential(
    nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
    nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
    nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
    nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh(),
).to(device)
netD = nn.Sequential(
    nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(ndf * 4, 1, 4, 1, 0, bias=False), nn.Sigmoid(),
).to(device)
netG.apply(weights_init)
netD.apply(weights_init)

dataset = TensorDataset(torch.rand(8192, 3, 32, 32) * 2 - 1)
dataloader = DataLoader(dataset, batch_size=opt.batchSize, shuffle=True, drop_last=True)

criterion = nn.BCELoss()
fixed_noise = torch.randn(64, nz, 1, 1, device=device)
real_label, fake_label = 1., 0.
optimizerD = optim.Adam(netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
logger = TensorboardLogger(opt.logdir)

step = 0
for epoch in range(opt.niter):
    for i, (real_cpu,) in enumerate(dataloader):
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        real_cpu = real_cpu.to(device)
        batch_size = real_cpu.size(0)
        label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype, device=device)
        output = netD(real_cpu).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        noise = torch.randn(batch_size, nz, 1, 1, device=device)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()

        # (2) Update G network: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()

        logger.scalars_summary('loss', {'D': errD, 'G': errG}, step)
        logger.scalars_summary('D_out', {'real': D_x, 'fake_before': D_G_z1, 'fake_after': D_G_z2}, step)
        if i % 50 == 0:
            print('[%d/%d][%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f'
                  % (epoch, opt.niter, i, len(dataloader), errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
        step += 1

    with torch.no_grad():
        logger.image_summary('fake', netG(fixed_noise), step)
    logger.histo_summary(netD, step)
    torch.save(netG.state_dict(), '%s/netG_epoch_%d.pth' % (opt.logdir, epoch))

logger.close()
