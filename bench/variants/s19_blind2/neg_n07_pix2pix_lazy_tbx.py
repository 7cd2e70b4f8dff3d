"""pix2pix-style training loop with batched scalar logging.

Scalars are queued as (tag, step, thunk) entries and resolved every
``flush_every`` steps; the queue is emptied after each flush so only the
last window of values is ever alive.
"""
import argparse
import functools
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from tensorboardX import SummaryWriter

from networks import UnetGenerator, NLayerDiscriminator
from data import AlignedDataset


class ScalarQueue(object):
    def __init__(self, writer, flush_every=100):
        self.writer = writer
        self.flush_every = flush_every
        self.pending = []

    def put(self, tag, value, step):
        self.pending.append((tag, step, functools.partial(float, value.detach())))
        if len(self.pending) >= self.flush_every:
            self.flush()

    def flush(self):
        for tag, step, thunk in self.pending:
            self.writer.add_scalar(tag, thunk(), step)
        self.pending = []


def set_requires_grad(net, flag):
    for p in net.parameters():
        p.requires_grad = flag


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--dataroot', required=True)
    p.add_argument('--niter', type=int, default=200)
    p.add_argument('--lambda_L1', type=float, default=100.0)
    p.add_argument('--lr', type=float, default=2e-4)
    p.add_argument('--name', default='facades_pix2pix')
    opt = p.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    netG = UnetGenerator(3, 3, 8).to(device)
    netD = NLayerDiscriminator(6).to(device)
    criterionGAN = nn.BCEWithLogitsLoss()
    criterionL1 = nn.L1Loss()
    optimizer_G = torch.optim.Adam(netG.parameters(), lr=opt.lr, betas=(0.5, 0.999))
    optimizer_D = torch.optim.Adam(netD.parameters(), lr=opt.lr, betas=(0.5, 0.999))

    loader = DataLoader(AlignedDataset(opt.dataroot), batch_size=1, shuffle=True, num_workers=4)
    writer = SummaryWriter(os.path.join('runs', opt.name))
    queue = ScalarQueue(writer)

    step = 0
    for epoch in range(opt.niter):
        for i, batch in enumerate(loader):
            real_A = batch['A'].to(device)
            real_B = batch['B'].to(device)
            fake_B = netG(real_A)

            # D
            set_requires_grad(netD, True)
            optimizer_D.zero_grad()
            pred_fake = netD(torch.cat((real_A, fake_B), 1).detach())
            pred_real = netD(torch.cat((real_A, real_B), 1))
            loss_D = 0.5 * (criterionGAN(pred_fake, torch.zeros_like(pred_fake)) +
                            criterionGAN(pred_real, torch.ones_like(pred_real)))
            loss_D.backward()
            optimizer_D.step()

            # G
            set_requires_grad(netD, False)
            optimizer_G.zero_grad()
            pred_fake = netD(torch.cat((real_A, fake_B), 1))
            loss_G_GAN = criterionGAN(pred_fake, torch.ones_like(pred_fake))
            loss_G_L1 = criterionL1(fake_B, real_B) * opt.lambda_L1
            loss_G = loss_G_GAN + loss_G_L1
            loss_G.backward()
            optimizer_G.step()

            queue.put('D', loss_D, step)
            queue.put('G_GAN', loss_G_GAN, step)
            queue.put('G_L1', loss_G_L1, step)
            step += 1

        queue.flush()
        print('Epoch [%d/%d] done, %d steps' % (epoch + 1, opt.niter, step))
        if (epoch + 1) % 5 == 0:
            torch.save(netG.state_dict(), os.path.join('checkpoints', opt.name,
                                                       '%d_net_G.pth' % (epoch + 1)))
    writer.close()


if __name__ == '__main__':
    main()
