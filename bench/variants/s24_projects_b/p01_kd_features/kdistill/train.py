"""Train a ResNet-18 student against a ResNet-50 teacher on CIFAR-100.

    python -m kdistill.train --data ./data --teacher-ckpt r50_c100.pt
"""
from __future__ import annotations

import argparse
import logging
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from kdistill.hooks import feature_loss
from kdistill.model import build_model

logger = logging.getLogger("kdistill")

MEAN, STD = (0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default="./data")
    p.add_argument("--student", default="resnet18")
    p.add_argument("--teacher", default="resnet50")
    p.add_argument("--teacher-ckpt", default="")
    p.add_argument("--num-classes", type=int, default=100)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--temperature", type=float, default=4.0)
    p.add_argument("--alpha", type=float, default=0.9)
    p.add_argument("--beta", type=float, default=50.0, help="feature loss weight")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--log-interval", type=int, default=50)
    return p.parse_args()


def kd_loss(s_logits, t_logits, T):
    return F.kl_div(F.log_softmax(s_logits / T, dim=1), F.softmax(t_logits / T, dim=1),
                    reduction="batchmean") * T * T


def loaders(args):
    train_tf = transforms.Compose([
        transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
        transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
    test_tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
    train_set = datasets.CIFAR100(args.data, train=True, download=True, transform=train_tf)
    test_set = datasets.CIFAR100(args.data, train=False, download=True, transform=test_tf)
    return (DataLoader(train_set, args.batch_size, shuffle=True, num_workers=args.workers,
                       pin_memory=True, drop_last=True),
            DataLoader(test_set, 256, shuffle=False, num_workers=args.workers))


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    for images, targets in loader:
        images, targets = images.to(device), targets.to(device)
        logits = model.student(images)
        correct += (logits.argmax(1) == targets).sum().item()
        total += targets.numel()
    return correct / max(total, 1)


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, test_loader = loaders(args)
    model = build_model(args).to(device)
    params = list(model.student.parameters()) + list(model.adapters.parameters())
    opt = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=5e-4, nesterov=True)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)

    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        for step, (images, targets) in enumerate(train_loader):
            images = images.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            s_logits, t_logits, s_feats, t_feats = model(images)
            ce = F.cross_entropy(s_logits, targets)
            kd = kd_loss(s_logits, t_logits, args.temperature)
            feat = feature_loss(s_feats, t_feats)
            loss = (1 - args.alpha) * ce + args.alpha * kd + args.beta * feat
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % args.log_interval == 0:
                logger.info("ep %d it %d loss %.4f ce %.4f kd %.4f feat %.4f", epoch, step,
                            loss.item(), ce.item(), kd.item(), feat.item())
        sched.step()
        acc = evaluate(model, test_loader, device)
        logger.info("epoch %d done in %.0fs, top1 %.2f%%", epoch, time.time() - t0, 100 * acc)


if __name__ == "__main__":
    main()
