'''Train CIFAR10 with PyTorch (ResNet / VGG / MobileNet from models/).'''
from __future__ import print_function

import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.optim as optim
import torch.nn.functional as F
import torch.backends.cudnn as cudnn
import torchvision
import torchvision.transforms as transforms

from models import *  # noqa

parser = argparse.ArgumentParser(description='PyTorch CIFAR10 Training')
parser.add_argument('--lr', default=0.1, type=float, help='learning rate')
parser.add_argument('--epochs', default=200, type=int)
parser.add_argument('--arch', default='ResNet18')
parser.add_argument('--resume', '-r', action='store_true', help='resume from checkpoint')
args = parser.parse_args()

device = 'cuda' if torch.cuda.is_available() else 'cpu'
best_acc = 0
start_epoch = 0


# ----------------------------------------------------------------------------
# utils
# ----------------------------------------------------------------------------
class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, name='meter'):
        self.name = name
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n  # leak
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        return '%s %.4f (%.4f)' % (self.name, float(self.val), float(self.avg))


def progress_bar(current, total, msg=None, bar_len=40):
    filled = int(bar_len * (current + 1) / total)
    sys.stdout.write('\r [' + '=' * filled + '>' + '.' * (bar_len - filled) + ']')
    if msg:
        sys.stdout.write(' | ' + msg)
    if current == total - 1:
        sys.stdout.write('\n')
    sys.stdout.flush()


def accuracy(output, target):
    _, predicted = output.max(1)
    return predicted.eq(target).sum().item() * 100.0 / target.size(0)


# ----------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------
print('==> Preparing data..')
transform_train = transforms.Compose([
    transforms.RandomCrop(32, padding=4),
    transforms.RandomHorizontalFlip(),
    transforms.ToTensor(),
    transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)),
])
transform_test = transforms.Compose([
    transforms.ToTensor(),
    transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)),
])
trainset = torchvision.datasets.CIFAR10(root='./data', train=True, download=True,
                                        transform=transform_train)
trainloader = torch.utils.data.DataLoader(trainset, batch_size=128, shuffle=True, num_workers=2)
testset = torchvision.datasets.CIFAR10(root='./data', train=False, download=True,
                                       transform=transform_test)
testloader = torch.utils.data.DataLoader(testset, batch_size=100, shuffle=False, num_workers=2)

# ----------------------------------------------------------------------------
# model
# ----------------------------------------------------------------------------
print('==> Building model..')
net = globals()[args.arch]()
net = net.to(device)
if device == 'cuda':
    net = torch.nn.DataParallel(net)
    cudnn.benchmark = True

if args.resume:
    print('==> Resuming from checkpoint..')
    assert os.path.isdir('checkpoint'), 'Error: no checkpoint directory found!'
    checkpoint = torch.load('./checkpoint/ckpt.t7')
    net.load_state_dict(checkpoint['net'])
    best_acc = checkpoint['acc']
    start_epoch = checkpoint['epoch']

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=[100, 150], gamma=0.1)


def train(epoch):
    print('\nEpoch: %d' % epoch)
    net.train()
    losses = AverageMeter('Loss')
    top1 = AverageMeter('Acc')
    for batch_idx, (inputs, targets) in enumerate(trainloader):
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()

        losses.update(loss, inputs.size(0))
        top1.update(accuracy(outputs, targets), inputs.size(0))
        progress_bar(batch_idx, len(trainloader), '%s | %s' % (losses, top1))


def test(epoch):
    global best_acc
    net.eval()
    losses = AverageMeter('Loss')
    top1 = AverageMeter('Acc')
    with torch.no_grad():
        for batch_idx, (inputs, targets) in enumerate(testloader):
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = net(inputs)
            loss = criterion(outputs, targets)
            losses.update(loss.item(), inputs.size(0))
            top1.update(accuracy(outputs, targets), inputs.size(0))
            progress_bar(batch_idx, len(testloader), '%s | %s' % (losses, top1))

    acc = top1.avg
    if acc > best_acc:
        print('Saving..')
        state = {'net': net.state_dict(), 'acc': acc, 'epoch': epoch}
        if not os.path.isdir('checkpoint'):
            os.mkdir('checkpoint')
        torch.save(state, './checkpoint/ckpt.t7')
        best_acc = acc


for epoch in range(start_epoch, start_epoch + args.epochs):
    t0 = time.time()
    train(epoch)
    test(epoch)
    scheduler.step()
    print('epoch time: %.1fs, best acc: %.2f' % (time.time() - t0, best_acc))
