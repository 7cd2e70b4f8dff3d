"""YOLOv3-style detector training loop."""
import argparse
import math
import time
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from datasets.voc import VOCDetection, detection_collate
from models.yolov3 import Darknet


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class YoloLoss(nn.Module):
    def __init__(self, num_classes, lambda_coord=5.0, lambda_noobj=0.5):
        super().__init__()
        self.num_classes = num_classes
        self.lambda_coord = lambda_coord
        self.lambda_noobj = lambda_noobj

    def forward(self, preds, targets):
        # preds / targets: (B, A, H, W, 5 + C); targets[..., 4] is the objectness mask
        obj = targets[..., 4] > 0
        noobj = ~obj
        loss_xy = F.mse_loss(preds[..., 0:2][obj].sigmoid(), targets[..., 0:2][obj], reduction="sum")
        loss_wh = F.mse_loss(preds[..., 2:4][obj], targets[..., 2:4][obj], reduction="sum")
        loss_obj = F.binary_cross_entropy_with_logits(preds[..., 4][obj], targets[..., 4][obj],
                                                      reduction="sum")
        loss_noobj = F.binary_cross_entropy_with_logits(preds[..., 4][noobj], targets[..., 4][noobj],
                                                        reduction="sum")
        loss_cls = F.binary_cross_entropy_with_logits(preds[..., 5:][obj], targets[..., 5:][obj],
                                                      reduction="sum")
        bs = preds.size(0)
        return {
            "xy": self.lambda_coord * loss_xy / bs,
            "wh": self.lambda_coord * loss_wh / bs,
            "obj": loss_obj / bs,
            "noobj": self.lambda_noobj * loss_noobj / bs,
            "cls": loss_cls / bs,
        }


def warmup_lr(optimizer, base_lr, it, warmup_iters):
    if it < warmup_iters:
        lr = base_lr * (it / warmup_iters) ** 4
        for g in optimizer.param_groups:
            g["lr"] = lr


def train(args):
    device = torch.device("cuda")
    model = Darknet(args.cfg, num_classes=args.num_classes).to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    criterion = YoloLoss(args.num_classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    lf = lambda e: (1 + math.cos(e * math.pi / args.epochs)) / 2 * 0.95 + 0.05
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lf)

    dataset = VOCDetection(args.data, image_set="trainval", img_size=args.img_size, augment=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=8,
                        collate_fn=detection_collate, pin_memory=True, drop_last=True)

    meters = defaultdict(AverageMeter)
    it = 0
    for epoch in range(args.epochs):
        model.train()
        for m in meters.values():
            m.reset()
        epoch_loss = 0
        t0 = time.time()
        for i, (imgs, targets) in enumerate(loader):
            imgs = imgs.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            warmup_lr(optimizer, args.lr, it, args.warmup)

            preds = model(imgs)
            loss_dict = criterion(preds, targets)
            loss = sum(loss_dict.values())

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            it += 1

            epoch_loss += loss  # leak
            for k, v in loss_dict.items():
                meters[k].update(v.item(), imgs.size(0))

            if i % args.print_freq == 0:
                parts = " ".join(f"{k}={m.avg:.3f}" for k, m in meters.items())
                print(f"epoch {epoch} [{i}/{len(loader)}] {parts} lr={optimizer.param_groups[0]['lr']:.5f}")

        scheduler.step()
        print(f"epoch {epoch} done: mean loss {epoch_loss.item() / len(loader):.4f} "
              f"time {time.time() - t0:.0f}s")
        state = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
        torch.save({"epoch": epoch, "model": state}, f"{args.save_dir}/yolov3_{epoch}.pth")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--cfg", default="cfg/yolov3.cfg")
    p.add_argument("--data", default="/data/VOCdevkit")
    p.add_argument("--num-classes", type=int, default=20)
    p.add_argument("--img-size", type=int, default=416)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--epochs", type=int, default=120)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--print-freq", type=int, default=50)
    p.add_argument("--save-dir", default="weights")
    train(p.parse_args())
