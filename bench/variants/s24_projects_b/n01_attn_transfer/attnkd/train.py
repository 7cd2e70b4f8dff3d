"""Attention-transfer training on CIFAR-10."""
from __future__ import annotations

import argparse
import logging

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms as T

from attnkd import hooks
from attnkd.model import build

logger = logging.getLogger("attnkd")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="./data")
    p.add_argument("--teacher", default="resnet34")
    p.add_argument("--student", default="resnet18")
    p.add_argument("--teacher-ckpt", default="")
    p.add_argument("--epochs", type=int, default=120)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--beta", type=float, default=1000.0)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--export", default="student.pt")
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    norm = T.Normalize((0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261))
    train_set = datasets.CIFAR10(args.data, train=True, download=True, transform=T.Compose(
        [T.RandomCrop(32, 4), T.RandomHorizontalFlip(), T.ToTensor(), norm]))
    loader = DataLoader(train_set, args.batch_size, shuffle=True, num_workers=args.workers,
                        drop_last=True, pin_memory=True)

    model = build(args.teacher, args.student, 10, args.teacher_ckpt).to(device)
    opt = torch.optim.SGD(model.student.parameters(), lr=args.lr, momentum=0.9,
                          weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, [60, 90], gamma=0.2)

    for epoch in range(args.epochs):
        model.train()
        seen, loss_sum, correct = 0, 0.0, 0
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            s_logits, _, s_feats, t_feats = model(x)
            ce = F.cross_entropy(s_logits, y)
            at = hooks.at_loss(s_feats, t_feats)
            loss = ce + args.beta / 2 * at
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            model.s_store.clear()
            model.t_store.clear()
            seen += y.size(0)
            loss_sum += loss.item() * y.size(0)
            correct += (s_logits.argmax(1) == y).sum().item()
        sched.step()
        logger.info("epoch %d loss %.4f train acc %.2f%%", epoch, loss_sum / seen,
                    100.0 * correct / seen)

    model.release()
    torch.save(model.student.state_dict(), args.export)


if __name__ == "__main__":
    main()
