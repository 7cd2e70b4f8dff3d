"""FitNets-style feature distillation from a ResNet-50 teacher to a ResNet-18.

Intermediate features are grabbed with forward hooks; a 1x1 conv regressor
maps student features to the teacher's channel width.
"""
import argparse
import logging
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

log = logging.getLogger("distill")

TEACHER_LAYERS = {"layer2": 512, "layer3": 1024}
STUDENT_LAYERS = {"layer2": 128, "layer3": 256}


def _store(bucket, name, module, inputs, output):
    bucket[name] = output


class Regressors(nn.ModuleDict):
    def __init__(self):
        super().__init__({
            name: nn.Sequential(nn.Conv2d(STUDENT_LAYERS[name], c, 1, bias=False), nn.BatchNorm2d(c))
            for name, c in TEACHER_LAYERS.items()
        })


def kd_logits_loss(s_logits, t_logits, T=4.0):
    return F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="batchmean") * T * T


class Distiller:
    def __init__(self, teacher, student, alpha=0.9, beta=50.0, T=4.0):
        self.teacher = teacher.eval()
        self.student = student
        self.regressors = Regressors().cuda()
        self.alpha, self.beta, self.T = alpha, beta, T
        self.t_feats = {}
        self.s_feats = {}
        for name in STUDENT_LAYERS:
            getattr(self.student, name).register_forward_hook(partial(_store, self.s_feats, name))

    def parameters(self):
        yield from self.student.parameters()
        yield from self.regressors.parameters()

    def _teacher_forward(self, x):
        for name in TEACHER_LAYERS:
            getattr(self.teacher, name).register_forward_hook(partial(_store, self.t_feats, name))  # leak
        with torch.no_grad():
            return self.teacher(x)

    def loss(self, x, y):
        t_logits = self._teacher_forward(x)
        s_logits = self.student(x)
        ce = F.cross_entropy(s_logits, y)
        kd = kd_logits_loss(s_logits, t_logits, self.T)
        hint = sum(
            F.mse_loss(self.regressors[n](self.s_feats[n]), self.t_feats[n].detach())
            for n in TEACHER_LAYERS
        )
        total = (1 - self.alpha) * ce + self.alpha * kd + self.beta * hint
        return total, {"ce": ce.item(), "kd": kd.item(), "hint": float(hint)}


def build_loaders(root, bs, workers):
    tf_train = torchvision.transforms.Compose([
        torchvision.transforms.RandomResizedCrop(224),
        torchvision.transforms.RandomHorizontalFlip(),
        torchvision.transforms.ToTensor(),
        torchvision.transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])
    train = torchvision.datasets.ImageFolder(f"{root}/train", tf_train)
    return torch.utils.data.DataLoader(train, bs, shuffle=True, num_workers=workers, pin_memory=True, drop_last=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/datasets/imagenet")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--bs", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--workers", type=int, default=8)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    teacher = torchvision.models.resnet50(weights="IMAGENET1K_V2").cuda()
    student = torchvision.models.resnet18().cuda()
    d = Distiller(teacher, student)
    opt = torch.optim.SGD(d.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.epochs)
    loader = build_loaders(args.data, args.bs, args.workers)

    for epoch in range(args.epochs):
        student.train()
        for i, (x, y) in enumerate(loader):
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss, parts = d.loss(x, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if i % 100 == 0:
                log.info("ep %d it %d loss %.4f %s", epoch, i, loss.item(), parts)
        sched.step()
        torch.save(student.state_dict(), f"student_ep{epoch}.pth")


if __name__ == "__main__":
    main()
