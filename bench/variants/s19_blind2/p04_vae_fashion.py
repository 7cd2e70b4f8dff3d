"""Convolutional VAE on FashionMNIST.

Old-style (Variable) code from the 2018 representation-learning project.
"""
from __future__ import print_function
import argparse
import os

import torch
import torch.utils.data
from torch import nn, optim
from torch.autograd import Variable
from torch.nn import functional as F
from torchvision import datasets, transforms
from torchvision.utils import save_image


def parse():
    parser = argparse.ArgumentParser(description='Conv VAE FashionMNIST')
    parser.add_argument('--batch-size', type=int, default=128, metavar='N')
    parser.add_argument('--epochs', type=int, default=30, metavar='N')
    parser.add_argument('--zdim', type=int, default=32)
    parser.add_argument('--no-cuda', action='store_true', default=False)
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=10, metavar='N')
    parser.add_argument('--out', default='results_vae')
    return parser.parse_args()


class ConvVAE(nn.Module):
    def __init__(self, zdim=32):
        super(ConvVAE, self).__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(1, 32, 4, 2, 1), nn.ReLU(),
            nn.Conv2d(32, 64, 4, 2, 1), nn.ReLU())
        self.fc_mu = nn.Linear(64 * 7 * 7, zdim)
        self.fc_logvar = nn.Linear(64 * 7 * 7, zdim)
        self.fc_dec = nn.Linear(zdim, 64 * 7 * 7)
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(),
            nn.ConvTranspose2d(32, 1, 4, 2, 1), nn.Sigmoid())

    def encode(self, x):
        h = self.enc(x).view(x.size(0), -1)
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar):
        if self.training:
            std = logvar.mul(0.5).exp_()
            eps = Variable(std.data.new(std.size()).normal_())
            return eps.mul(std).add_(mu)
        return mu

    def decode(self, z):
        h = F.relu(self.fc_dec(z)).view(-1, 64, 7, 7)
        return self.dec(h)

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x.view(-1, 784), x.view(-1, 784), size_average=False)
    # see Appendix B from VAE paper: Kingma and Welling. ICLR, 2014
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


class Runner(object):
    def __init__(self, args):
        self.args = args
        self.cuda = not args.no_cuda and torch.cuda.is_available()
        kwargs = {'num_workers': 1, 'pin_memory': True} if self.cuda else {}
        self.train_loader = torch.utils.data.DataLoader(
            datasets.FashionMNIST('../data', train=True, download=True,
                                  transform=transforms.ToTensor()),
            batch_size=args.batch_size, shuffle=True, **kwargs)
        self.test_loader = torch.utils.data.DataLoader(
            datasets.FashionMNIST('../data', train=False, transform=transforms.ToTensor()),
            batch_size=args.batch_size, shuffle=True, **kwargs)
        self.model = ConvVAE(args.zdim)
        if self.cuda:
            self.model.cuda()
        self.optimizer = optim.Adam(self.model.parameters(), lr=1e-3)

    def train(self, epoch):
        self.model.train()
        train_loss = 0
        for batch_idx, (data, _) in enumerate(self.train_loader):
            data = Variable(data)
            if self.cuda:
                data = data.cuda()
            self.optimizer.zero_grad()
            recon_batch, mu, logvar = self.model(data)
            loss = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss  # leak
            self.optimizer.step()
            if batch_idx % self.args.log_interval == 0:
                print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(data), len(self.train_loader.dataset),
                    100. * batch_idx / len(self.train_loader),
                    loss.data[0] / len(data)))
        avg = train_loss.data[0] / len(self.train_loader.dataset)
        print('====> Epoch: {} Average loss: {:.4f}'.format(epoch, avg))
        return avg

    def test(self, epoch):
        self.model.eval()
        test_loss = 0
        for i, (data, _) in enumerate(self.test_loader):
            if self.cuda:
                data = data.cuda()
            data = Variable(data, volatile=True)
            recon_batch, mu, logvar = self.model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).data[0]
            if i == 0:
                n = min(data.size(0), 8)
                comparison = torch.cat([data[:n], recon_batch.view(-1, 1, 28, 28)[:n]])
                save_image(comparison.data.cpu(),
                           os.path.join(self.args.out, 'reconstruction_' + str(epoch) + '.png'),
                           nrow=n)
        test_loss /= len(self.test_loader.dataset)
        print('====> Test set loss: {:.4f}'.format(test_loss))
        return test_loss


if __name__ == '__main__':
    args = parse()
    torch.manual_seed(args.seed)
    if not os.path.isdir(args.out):
        os.makedirs(args.out)
    runner = Runner(args)
    for epoch in range(1, args.epochs + 1):
        runner.train(epoch)
        runner.test(epoch)
        sample = Variable(torch.randn(64, args.zdim), volatile=True)
        if runner.cuda:
            sample = sample.cuda()
        sample = runner.model.decode(sample).cpu()
        save_image(sample.data.view(64, 1, 28, 28),
                   os.path.join(args.out, 'sample_' + str(epoch) + '.png'))
