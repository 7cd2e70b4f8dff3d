"""Distil a ResNet-152 teacher into a ResNet-18 student.

    python -m kdistill.distill --data /datasets/imagenet --epochs 100
"""
import argparse
import logging
import os
import time

import torch
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms

from kdistill import teacher
from kdistill.losses import DistillationLoss

logger = logging.getLogger("kdistill")


class StudentWithFeat(torch.nn.Module):
    def __init__(self, arch: str = "resnet18", num_classes: int = 1000):
        super().__init__()
        self.net = getattr(torchvision.models, arch)(num_classes=num_classes)

    def forward(self, x):
        n = self.net
        x = n.maxpool(n.relu(n.bn1(n.conv1(x))))
        feat = n.layer4(n.layer3(n.layer2(n.layer1(x))))
        return n.fc(torch.flatten(n.avgpool(feat), 1)), feat


def loaders(root, batch_size, workers):
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), norm])
    val_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])
    train = torchvision.datasets.ImageFolder(os.path.join(root, "train"), train_tf)
    val = torchvision.datasets.ImageFolder(os.path.join(root, "val"), val_tf)
    return (DataLoader(train, batch_size, shuffle=True, num_workers=workers, pin_memory=True, drop_last=True),
            DataLoader(val, 256, num_workers=workers, pin_memory=True))


@torch.no_grad()
def evaluate(student, loader, device):
    student.eval()
    correct = total = 0
    for x, y in loader:
        logits, _ = student(x.to(device, non_blocking=True))
        correct += (logits.argmax(-1).cpu() == y).sum().item()
        total += y.numel()
    return correct / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--temperature", type=float, default=4.0)
    p.add_argument("--alpha", type=float, default=0.9)
    p.add_argument("--hint-weight", type=float, default=0.0)
    p.add_argument("--student-steps", type=int, default=1, help="student updates per batch")
    p.add_argument("--workers", type=int, default=10)
    p.add_argument("--out", default="ckpt/kd_r18")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda")
    os.makedirs(args.out, exist_ok=True)

    train_dl, val_dl = loaders(args.data, args.batch_size, args.workers)
    tch = teacher.FrozenTeacher("resnet152").to(device)
    logger.info("teacher top-1 (50 val batches): %.4f", teacher.teacher_accuracy(tch, val_dl, device))
    student = StudentWithFeat().to(device)
    criterion = DistillationLoss(args.alpha, args.temperature, args.hint_weight).to(device)
    params = list(student.parameters()) + list(criterion.parameters())
    opt = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=1e-4, nesterov=True)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, epochs=args.epochs, steps_per_epoch=len(train_dl))

    for epoch in range(args.epochs):
        student.train()
        t0, seen, sums = time.time(), 0, {"ce": 0.0, "kd": 0.0}
        for it, (x, y) in enumerate(train_dl):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            for _ in range(args.student_steps):
                t_logits, t_probs, t_feat = tch.soft_targets(x, args.temperature)
                s_logits, s_feat = student(x)
                loss, parts = criterion(s_logits, s_feat, t_probs, t_feat, y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            sched.step()
            seen += y.numel()
            for k in sums:
                sums[k] += parts[k].item() * y.numel()
            if it % 200 == 0:
                logger.info("ep %d it %d loss %.4f (%.0f img/s)", epoch, it, loss.item(), seen / (time.time() - t0))
        acc = evaluate(student, val_dl, device)
        logger.info("epoch %d: ce %.4f kd %.4f val@1 %.4f", epoch, sums["ce"] / seen, sums["kd"] / seen, acc)
        torch.save({"student": student.state_dict(), "epoch": epoch, "acc": acc},
                   os.path.join(args.out, "last.pt"))


if __name__ == "__main__":
    main()
