"""python -m medseg.train --root /data/btcv --epochs 500"""
import argparse
import logging
import os

import torch

from medseg.data import build_loaders
from medseg.model import DiceCELoss, UNet3D

logger = logging.getLogger("medseg")


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--epochs", type=int, default=500)
    p.add_argument("--roi", type=int, nargs=3, default=[96, 96, 96])
    p.add_argument("--batch-size", type=int, default=2)
    p.add_argument("--num-workers", type=int, default=6)
    p.add_argument("--n-classes", type=int, default=14)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--val-every", type=int, default=10)
    p.add_argument("--out", default="runs/unet3d")
    return p.parse_args()


@torch.no_grad()
def dice_per_class(pred, target, n_classes):
    scores = []
    for c in range(1, n_classes):
        p, t = pred == c, target == c
        denom = p.sum() + t.sum()
        scores.append(float(2 * (p & t).sum() / denom) if denom > 0 else float("nan"))
    return scores


@torch.no_grad()
def validate(model, loader, n_classes, roi, device):
    model.eval()
    per_case = []
    for batch in loader:
        img = batch["image"].to(device)
        lbl = batch["label"].to(device)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(img)
        per_case.append(dice_per_class(logits.argmax(1, keepdim=True), lbl, n_classes))
    arr = torch.tensor(per_case)
    return torch.nanmean(arr).item()


def main():
    args = parse()
    logging.basicConfig(level=logging.INFO)
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda")
    train_dl, val_dl = build_loaders(args.root, args.roi, args.batch_size, args.num_workers)
    model = UNet3D(n_classes=args.n_classes).to(device)
    criterion = DiceCELoss(args.n_classes)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.99, nesterov=True, weight_decay=3e-5)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: (1 - e / args.epochs) ** 0.9)
    scaler = torch.cuda.amp.GradScaler()
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for batch in train_dl:
            img = batch["image"].to(device, non_blocking=True)
            lbl = batch["label"].to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(img), lbl)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 12.0)
            scaler.step(opt)
            scaler.update()
            running += loss.item()
        sched.step()
        logger.info("epoch %d loss %.4f lr %.5f", epoch, running / len(train_dl), opt.param_groups[0]["lr"])
        if (epoch + 1) % args.val_every == 0:
            dsc = validate(model, val_dl, args.n_classes, args.roi, device)
            logger.info("epoch %d val mean dice %.4f", epoch, dsc)
            if dsc > best:
                best = dsc
                torch.save(model.state_dict(), os.path.join(args.out, "best.pt"))


if __name__ == "__main__":
    main()
