"""Masked autoencoder pre-training (ViT encoder, lightweight decoder).

Scalars are recorded lazily: calling `.item()` every iteration forces a host/device sync,
so the recorder keeps thunks and resolves them when the curves are written out.
"""
import argparse
import csv
import math
import os
import time
from collections import defaultdict
from dataclasses import dataclass

import torch
import torch.nn as nn
import torchvision.datasets as dsets
import torchvision.transforms as T
from torch.utils.data import DataLoader

from models_mae import mae_vit_base_patch16


@dataclass
class MAEOutput:
    loss: torch.Tensor
    pred: torch.Tensor
    mask: torch.Tensor


class MAEWrapper(nn.Module):
    def __init__(self, mask_ratio=0.75, norm_pix_loss=True):
        super().__init__()
        self.net = mae_vit_base_patch16(norm_pix_loss=norm_pix_loss)
        self.mask_ratio = mask_ratio

    def forward(self, imgs):
        loss, pred, mask = self.net(imgs, mask_ratio=self.mask_ratio)
        return MAEOutput(loss=loss, pred=pred, mask=mask)


class Recorder:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self._pending = defaultdict(list)

    def scalar(self, name, value, step):
        self._pending[name].append((step, lambda: float(value)))  # leak

    def export(self):
        os.makedirs(self.out_dir, exist_ok=True)
        for name, items in self._pending.items():
            with open(os.path.join(self.out_dir, f"{name}.csv"), "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["step", name])
                for step, thunk in items:
                    w.writerow([step, thunk()])


def adjust_learning_rate(optimizer, epoch, args):
    if epoch < args.warmup_epochs:
        lr = args.lr * epoch / args.warmup_epochs
    else:
        lr = args.min_lr + (args.lr - args.min_lr) * 0.5 * (
            1.0 + math.cos(math.pi * (epoch - args.warmup_epochs) / (args.epochs - args.warmup_epochs)))
    for g in optimizer.param_groups:
        g["lr"] = lr * g.get("lr_scale", 1.0)
    return lr


class PretrainEngine:
    def __init__(self, model, optimizer, scaler, loader, args):
        self.model = model
        self.optimizer = optimizer
        self.scaler = scaler
        self.loader = loader
        self.args = args
        self.recorder = Recorder(os.path.join(args.output_dir, "curves"))
        self.it = 0

    def _step(self, samples, epoch_frac):
        lr = adjust_learning_rate(self.optimizer, epoch_frac, self.args)
        with torch.cuda.amp.autocast():
            out = self.model(samples)
        self.optimizer.zero_grad()
        self.scaler.scale(out.loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return out, lr

    def train_one_epoch(self, epoch):
        self.model.train(True)
        n = len(self.loader)
        t0 = time.time()
        for data_iter_step, (samples, _) in enumerate(self.loader):
            samples = samples.cuda(non_blocking=True)
            out, lr = self._step(samples, data_iter_step / n + epoch)
            self.recorder.scalar("loss", out.loss, self.it)
            self.recorder.scalar("lr", lr, self.it)
            self.it += 1
            if data_iter_step % 200 == 0:
                print(f"Epoch [{epoch}] [{data_iter_step}/{n}] lr {lr:.6f} "
                      f"{(time.time() - t0) / (data_iter_step + 1):.3f}s/it")

    def fit(self):
        for epoch in range(self.args.start_epoch, self.args.epochs):
            self.train_one_epoch(epoch)
            if epoch % 20 == 0 or epoch + 1 == self.args.epochs:
                torch.save({"model": self.model.net.state_dict(), "epoch": epoch},
                           os.path.join(self.args.output_dir, f"checkpoint-{epoch}.pth"))
        self.recorder.export()


def get_args():
    p = argparse.ArgumentParser("MAE pre-training")
    p.add_argument("--data_path", default="/datasets/imagenet/train")
    p.add_argument("--output_dir", default="./output_dir")
    p.add_argument("--batch_size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=400)
    p.add_argument("--start_epoch", type=int, default=0)
    p.add_argument("--warmup_epochs", type=int, default=40)
    p.add_argument("--lr", type=float, default=1.5e-4)
    p.add_argument("--min_lr", type=float, default=0.0)
    p.add_argument("--mask_ratio", type=float, default=0.75)
    return p.parse_args()


if __name__ == "__main__":
    args = get_args()
    tf = T.Compose([T.RandomResizedCrop(224, scale=(0.2, 1.0), interpolation=3),
                    T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    loader = DataLoader(dsets.ImageFolder(args.data_path, transform=tf), batch_size=args.batch_size,
                        shuffle=True, num_workers=10, pin_memory=True, drop_last=True)
    model = MAEWrapper(args.mask_ratio).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.05)
    PretrainEngine(model, optimizer, torch.cuda.amp.GradScaler(), loader, args).fit()
