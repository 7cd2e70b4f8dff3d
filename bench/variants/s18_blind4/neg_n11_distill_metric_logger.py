"""Knowledge distillation (DeiT-style soft targets) with a torchvision-references
style MetricLogger."""
import argparse
import datetime
import time
from collections import defaultdict, deque

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class SmoothedValue:
    def __init__(self, window_size=20, fmt="{median:.4f} ({global_avg:.4f})"):
        self.deque = deque(maxlen=window_size)
        self.total = 0.0
        self.count = 0
        self.fmt = fmt

    def update(self, value, n=1):
        self.deque.append(value)
        self.count += n
        self.total += value * n

    @property
    def median(self):
        d = sorted(self.deque)
        return d[len(d) // 2]

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)

    def __str__(self):
        return self.fmt.format(median=self.median, global_avg=self.global_avg)


class MetricLogger:
    def __init__(self, delimiter="  "):
        self.meters = defaultdict(SmoothedValue)
        self.delimiter = delimiter

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()
            assert isinstance(v, (float, int))
            self.meters[k].update(v)

    def log_every(self, iterable, print_freq, header=""):
        start = time.time()
        for i, obj in enumerate(iterable):
            yield obj
            if i % print_freq == 0:
                parts = [f"{n}: {m}" for n, m in self.meters.items()]
                print(f"{header} [{i}] " + self.delimiter.join(parts))
        print(f"{header} took {datetime.timedelta(seconds=int(time.time() - start))}")


def distillation_loss(student_logits, teacher_logits, target, alpha=0.5, tau=3.0):
    base = F.cross_entropy(student_logits, target)
    kd = F.kl_div(F.log_softmax(student_logits / tau, dim=1),
                  F.log_softmax(teacher_logits / tau, dim=1),
                  reduction="batchmean", log_target=True) * tau * tau
    return (1 - alpha) * base + alpha * kd, base, kd


def train_one_epoch(student, teacher, loader, optimizer, device, epoch, args):
    student.train()
    teacher.eval()
    logger = MetricLogger()
    for images, target in logger.log_every(loader, args.print_freq, f"Epoch [{epoch}]"):
        images, target = images.to(device), target.to(device)
        with torch.no_grad():
            t_logits = teacher(images)
        s_logits = student(images)
        loss, base, kd = distillation_loss(s_logits, t_logits, target, args.alpha, args.tau)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        acc1 = (s_logits.argmax(1) == target).float().mean().item() * 100
        logger.update(loss=loss, ce=base, kd=kd, acc1=acc1,
                      lr=optimizer.param_groups[0]["lr"])
    return {k: m.global_avg for k, m in logger.meters.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/datasets/imagenet")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--tau", type=float, default=3.0)
    ap.add_argument("--print-freq", type=int, default=50)
    args = ap.parse_args()

    device = torch.device("cuda")
    teacher = torchvision.models.resnet152(weights="IMAGENET1K_V2").to(device)
    student = torchvision.models.resnet18().to(device)
    tf = torchvision.transforms.Compose([
        torchvision.transforms.RandomResizedCrop(224), torchvision.transforms.RandomHorizontalFlip(),
        torchvision.transforms.ToTensor()])
    ds = torchvision.datasets.ImageFolder(f"{args.data}/train", tf)
    loader = torch.utils.data.DataLoader(ds, batch_size=256, shuffle=True, num_workers=8, pin_memory=True)
    opt = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    for epoch in range(args.epochs):
        stats = train_one_epoch(student, teacher, loader, opt, device, epoch, args)
        print(epoch, stats)


if __name__ == "__main__":
    main()
