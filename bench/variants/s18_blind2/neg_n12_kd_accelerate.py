"""Knowledge distillation (ResNet-50 teacher -> MobileNetV3 student) with accelerate."""
import argparse
import json
import os

import timm
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def kd_loss(student_logits, teacher_logits, T):
    p_t = F.softmax(teacher_logits / T, dim=-1)
    log_p_s = F.log_softmax(student_logits / T, dim=-1)
    return F.kl_div(log_p_s, p_t, reduction="batchmean") * (T * T)


def distill_step(student, teacher, batch, cfg):
    images, labels = batch
    with torch.no_grad():
        t_logits = teacher(images)
    s_logits = student(images)
    ce = F.cross_entropy(s_logits, labels, label_smoothing=cfg.smoothing)
    kd = kd_loss(s_logits, t_logits, cfg.temperature)
    total = cfg.alpha * kd + (1 - cfg.alpha) * ce
    return total, (ce, kd)


def build_loaders(root, bs, workers):
    norm = transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    tr = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor(), norm])
    te = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])
    train = datasets.ImageFolder(os.path.join(root, "train"), tr)
    val = datasets.ImageFolder(os.path.join(root, "val"), te)
    return (DataLoader(train, bs, shuffle=True, num_workers=workers, pin_memory=True, drop_last=True),
            DataLoader(val, bs, shuffle=False, num_workers=workers))


@torch.no_grad()
def evaluate(model, loader, accelerator):
    model.eval()
    correct = torch.zeros((), device=accelerator.device)
    seen = torch.zeros((), device=accelerator.device)
    for images, labels in loader:
        preds = model(images).argmax(-1)
        preds, labels = accelerator.gather_for_metrics((preds, labels))
        correct += (preds == labels).sum()
        seen += labels.numel()
    model.train()
    return (correct / seen).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/datasets/imagenet100")
    ap.add_argument("--teacher", default="resnet50.a1_in1k")
    ap.add_argument("--student", default="mobilenetv3_large_100")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--bs", type=int, default=128)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--alpha", type=float, default=0.9)
    ap.add_argument("--temperature", type=float, default=4.0)
    ap.add_argument("--smoothing", type=float, default=0.1)
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--out", default="kd_out")
    cfg = ap.parse_args()

    accelerator = Accelerator(mixed_precision="bf16")
    train_dl, val_dl = build_loaders(cfg.data, cfg.bs, cfg.workers)
    n_cls = len(train_dl.dataset.classes)
    teacher = timm.create_model(cfg.teacher, pretrained=True, num_classes=n_cls)
    student = timm.create_model(cfg.student, pretrained=False, num_classes=n_cls)
    teacher.eval().requires_grad_(False)
    opt = torch.optim.AdamW(student.parameters(), lr=cfg.lr, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg.lr, total_steps=cfg.epochs * len(train_dl))
    student, teacher, opt, train_dl, val_dl, sched = accelerator.prepare(student, teacher, opt, train_dl, val_dl, sched)

    kd_hist = {}
    step = 0
    for epoch in range(cfg.epochs):
        student.train()
        for batch in train_dl:
            total, (ce, kd) = distill_step(student, teacher, batch, cfg)
            accelerator.backward(total)
            accelerator.clip_grad_norm_(student.parameters(), 5.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            if step % cfg.log_every == 0:
                kd_hist[step] = kd.item()
                accelerator.print(f"ep {epoch} step {step} total {total.item():.4f} ce {ce.item():.4f} kd {kd.item():.4f}")
            step += 1
        acc = evaluate(student, val_dl, accelerator)
        accelerator.print(f"epoch {epoch} top1 {acc:.4f}")

    if accelerator.is_main_process:
        os.makedirs(cfg.out, exist_ok=True)
        with open(os.path.join(cfg.out, "kd_curve.json"), "w") as f:
            json.dump(kd_hist, f)
        accelerator.save(accelerator.unwrap_model(student).state_dict(), os.path.join(cfg.out, "student.pt"))


if __name__ == "__main__":
    main()
