import argparse
import os
import time

import torch
import torch.nn as nn
import torch.backends.cudnn as cudnn
import torch.optim as optim
import torch.utils.data as data
from torch.autograd import Variable

from data import VOCDetection, VOCAnnotationTransform, SSDAugmentation, BaseTransform, detection_collate
from layers.modules import MultiBoxLoss
from ssd import build_ssd

parser = argparse.ArgumentParser(description="Single Shot MultiBox Detector Training")
parser.add_argument("--voc_root", default="/data/VOCdevkit/")
parser.add_argument("--basenet", default="vgg16_reducedfc.pth")
parser.add_argument("--batch_size", default=32, type=int)
parser.add_argument("--resume", default=None, type=str)
parser.add_argument("--num_workers", default=4, type=int)
parser.add_argument("--lr", "--learning-rate", default=1e-3, type=float)
parser.add_argument("--epochs", default=200, type=int)
parser.add_argument("--save_folder", default="weights/")
args = parser.parse_args()

NUM_CLASSES = 21
MEANS = (104, 117, 123)


def xavier(param):
    nn.init.xavier_uniform(param)


def weights_init(m):
    if isinstance(m, nn.Conv2d):
        xavier(m.weight.data)
        m.bias.data.zero_()


def train(net, loader, criterion, optimizer, epoch):
    net.train()
    loc_loss = 0
    conf_loss = 0
    for iteration, (images, targets) in enumerate(loader):
        images = Variable(images.cuda())
        targets = [Variable(anno.cuda(), volatile=True) for anno in targets]
        t0 = time.time()
        out = net(images)
        optimizer.zero_grad()
        loss_l, loss_c = criterion(out, targets)
        loss = loss_l + loss_c
        loss.backward()
        optimizer.step()
        t1 = time.time()
        loc_loss += loss_l.data[0]
        conf_loss += loss_c.data[0]
        if iteration % 10 == 0:
            print("timer: %.4f sec." % (t1 - t0))
            print("epoch " + repr(epoch) + " iter " + repr(iteration) + " || Loss: %.4f ||" % (loss.data[0]))
    return loc_loss / len(loader), conf_loss / len(loader)


def validate(net, loader, criterion):
    net.eval()
    total_l, total_c, batches = 0.0, 0.0, 0
    with torch.no_grad():
        for images, targets in loader:
            images = Variable(images.cuda())
            targets = [Variable(anno.cuda()) for anno in targets]
            out = net(images)
            loss_l, loss_c = criterion(out, targets)
            total_l += loss_l.data[0]
            total_c += loss_c.data[0]
            batches += 1
    return total_l / batches, total_c / batches


def main():
    ssd_net = build_ssd("train", 300, NUM_CLASSES)
    net = torch.nn.DataParallel(ssd_net).cuda()
    cudnn.benchmark = True
    if args.resume:
        ssd_net.load_weights(args.resume)
    else:
        ssd_net.vgg.load_state_dict(torch.load(args.save_folder + args.basenet))
        ssd_net.extras.apply(weights_init)
        ssd_net.loc.apply(weights_init)
        ssd_net.conf.apply(weights_init)

    optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=[120, 160], gamma=0.1)
    criterion = MultiBoxLoss(NUM_CLASSES, 0.5, True, 0, True, 3, 0.5, False, True)

    train_set = VOCDetection(args.voc_root, [("2007", "trainval"), ("2012", "trainval")],
                             SSDAugmentation(300, MEANS), VOCAnnotationTransform())
    val_set = VOCDetection(args.voc_root, [("2007", "test")], BaseTransform(300, MEANS),
                           VOCAnnotationTransform())
    train_loader = data.DataLoader(train_set, args.batch_size, num_workers=args.num_workers,
                                   shuffle=True, collate_fn=detection_collate, pin_memory=True)
    val_loader = data.DataLoader(val_set, args.batch_size, num_workers=args.num_workers,
                                 collate_fn=detection_collate, pin_memory=True)

    for epoch in range(args.epochs):
        loc, conf = train(net, train_loader, criterion, optimizer, epoch)
        scheduler.step()
        vl, vc = validate(net, val_loader, criterion)
        print("epoch %d train loc %.4f conf %.4f | val loc %.4f conf %.4f" % (epoch, loc, conf, vl, vc))
        torch.save(net.module.state_dict(), os.path.join(args.save_folder, "ssd300_VOC_%d.pth" % epoch))


if __name__ == "__main__":
    main()
