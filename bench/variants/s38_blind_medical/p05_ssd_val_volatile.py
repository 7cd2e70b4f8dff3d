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


def str2bool(v):
    return v.lower() in ("yes", "true", "t", "1")


parser = argparse.ArgumentParser(description="SSD training with validation")
parser.add_argument("--voc_root", default=os.path.expanduser("~/data/VOCdevkit/"))
parser.add_argument("--basenet", default="vgg16_reducedfc.pth")
parser.add_argument("--batch_size", default=32, type=int)
parser.add_argument("--num_workers", default=4, type=int)
parser.add_argument("--cuda", default=True, type=str2bool)
parser.add_argument("--lr", default=1e-3, type=float)
parser.add_argument("--max_epoch", default=230, type=int)
parser.add_argument("--val_every", default=5, type=int)
parser.add_argument("--save_folder", default="weights/")
args = parser.parse_args()

cfg = {"num_classes": 21, "min_dim": 300, "lr_steps": (150, 190)}
MEANS = (104, 117, 123)


def train_epoch(net, loader, criterion, optimizer, epoch):
    net.train()
    loc_loss, conf_loss = 0.0, 0.0
    t0 = time.time()
    for iteration, (images, targets) in enumerate(loader):
        if args.cuda:
            images = Variable(images.cuda())
            targets = [Variable(ann.cuda(), volatile=True) for ann in targets]
        else:
            images = Variable(images)
            targets = [Variable(ann, volatile=True) for ann in targets]
        out = net(images)
        optimizer.zero_grad()
        loss_l, loss_c = criterion(out, targets)
        loss = loss_l + loss_c
        loss.backward()
        optimizer.step()
        loc_loss += loss_l.item()
        conf_loss += loss_c.item()
        if iteration % 50 == 0:
            print("epoch %d iter %d || loss: %.4f (%.2fs)" % (epoch, iteration, loss.item(), time.time() - t0))
    return loc_loss / len(loader), conf_loss / len(loader)


def validate(net, loader, criterion):
    net.eval()
    val_loss = 0
    n = 0
    for images, targets in loader:
        images = Variable(images.cuda(), volatile=True)
        targets = [Variable(ann.cuda(), volatile=True) for ann in targets]
        out = net(images)
        loss_l, loss_c = criterion(out, targets)
        val_loss = val_loss + loss_l + loss_c  # leak
        n += 1
    return val_loss.item() / n


def adjust_learning_rate(optimizer, gamma, step):
    lr = args.lr * (gamma ** step)
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr


def main():
    ssd_net = build_ssd("train", cfg["min_dim"], cfg["num_classes"])
    net = ssd_net
    if args.cuda:
        net = torch.nn.DataParallel(ssd_net)
        cudnn.benchmark = True
    vgg_weights = torch.load(args.save_folder + args.basenet)
    ssd_net.vgg.load_state_dict(vgg_weights)
    if args.cuda:
        net = net.cuda()

    optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    criterion = MultiBoxLoss(cfg["num_classes"], 0.5, True, 0, True, 3, 0.5, False, args.cuda)

    train_set = VOCDetection(args.voc_root, [("2007", "trainval"), ("2012", "trainval")],
                             SSDAugmentation(cfg["min_dim"], MEANS), VOCAnnotationTransform())
    val_set = VOCDetection(args.voc_root, [("2007", "test")],
                           BaseTransform(cfg["min_dim"], MEANS), VOCAnnotationTransform())
    train_loader = data.DataLoader(train_set, args.batch_size, num_workers=args.num_workers, shuffle=True,
                                   collate_fn=detection_collate, pin_memory=True)
    val_loader = data.DataLoader(val_set, args.batch_size, num_workers=args.num_workers, shuffle=False,
                                 collate_fn=detection_collate, pin_memory=True)

    step_index = 0
    best = float("inf")
    for epoch in range(args.max_epoch):
        if epoch in cfg["lr_steps"]:
            step_index += 1
            adjust_learning_rate(optimizer, 0.1, step_index)
        loc, conf = train_epoch(net, train_loader, criterion, optimizer, epoch)
        print("epoch %d: loc %.4f conf %.4f" % (epoch, loc, conf))
        if epoch % args.val_every == 0:
            vl = validate(net, val_loader, criterion)
            print("epoch %d: val loss %.4f" % (epoch, vl))
            if vl < best:
                best = vl
                torch.save(net.module.state_dict(), os.path.join(args.save_folder, "ssd300_best.pth"))


if __name__ == "__main__":
    main()
