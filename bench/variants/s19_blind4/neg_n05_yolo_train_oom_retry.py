"""Minimal YOLO-style detector trainer for the drone-imagery dataset.

Images come in mosaic batches of varying size (multi-scale training), so the
occasional batch runs out of memory on the 12 GB cards in the lab.  When that
happens the batch is re-run in smaller chunks with gradient accumulation.
"""
import argparse
import logging
import math
import random
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast
from tqdm import tqdm

from det.data import build_dataloader
from det.loss import YoloLoss
from det.model import build_yolo

LOGGER = logging.getLogger("train")


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("data/drone.yaml"))
    ap.add_argument("--imgsz", type=int, default=640)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=150)
    ap.add_argument("--lr0", type=float, default=0.01)
    ap.add_argument("--multi-scale", action="store_true")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--save-dir", type=Path, default=Path("runs/train/exp"))
    return ap.parse_args()


def rescale_batch(imgs, targets, imgsz, stride=32):
    sz = random.randrange(int(imgsz * 0.5), int(imgsz * 1.5) + stride) // stride * stride
    factor = sz / max(imgs.shape[2:])
    if factor != 1:
        new_shape = [math.ceil(x * factor / stride) * stride for x in imgs.shape[2:]]
        imgs = F.interpolate(imgs, size=new_shape, mode="bilinear", align_corners=False)
    return imgs, targets


class Trainer:
    def __init__(self, args):
        self.args = args
        self.device = torch.device("cuda:0")
        self.model = build_yolo(nc=10).to(self.device)
        self.criterion = YoloLoss(self.model)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=args.lr0, momentum=0.937, nesterov=True)
        self.scaler = GradScaler()
        self.train_loader = build_dataloader(args.data, "train", args.imgsz, args.batch, workers=args.workers)
        self.history = {"box": [], "obj": [], "cls": []}
        self.oom_batches = 0

    def _forward_backward(self, imgs, targets, scale=1.0):
        with autocast():
            preds = self.model(imgs)
            loss, loss_items = self.criterion(preds, targets)
        self.scaler.scale(loss * scale).backward()
        return loss_items.detach()

    def _step_in_chunks(self, imgs, targets, n_chunks=2):
        items = torch.zeros(3, device=self.device)
        for idx in torch.arange(imgs.shape[0]).chunk(n_chunks):
            sel = torch.isin(targets[:, 0].long(), idx.to(self.device))
            sub_t = targets[sel].clone()
            sub_t[:, 0] -= idx[0]
            items += self._forward_backward(imgs[idx], sub_t, scale=1.0 / n_chunks)
        return items / n_chunks

    def train_epoch(self, epoch):
        self.model.train()
        mloss = torch.zeros(3, device=self.device)
        pbar = tqdm(enumerate(self.train_loader), total=len(self.train_loader))
        for i, (imgs, targets, paths, _) in pbar:
            imgs = imgs.to(self.device, non_blocking=True).float() / 255
            targets = targets.to(self.device)
            if self.args.multi_scale:
                imgs, targets = rescale_batch(imgs, targets, self.args.imgsz)

            self.optimizer.zero_grad(set_to_none=True)
            oom = False
            try:
                loss_items = self._forward_backward(imgs, targets)
            except RuntimeError as e:
                if "out of memory" not in str(e):
                    raise
                oom = True
            if oom:
                # handled outside the except block so the exception (and the
                # frames holding the activations) is released first
                self.oom_batches += 1
                LOGGER.warning("OOM on batch %d (%s), retrying in chunks", i, tuple(imgs.shape))
                self.optimizer.zero_grad(set_to_none=True)
                torch.cuda.empty_cache()
                loss_items = self._step_in_chunks(imgs, targets)
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 10.0)
            self.scaler.step(self.optimizer)
            self.scaler.update()

            mloss = (mloss * i + loss_items) / (i + 1)
            mem = torch.cuda.memory_reserved() / 1e9
            pbar.set_description(f"{epoch}/{self.args.epochs - 1} {mem:.3g}G "
                                 f"box={mloss[0]:.4f} obj={mloss[1]:.4f} cls={mloss[2]:.4f}")
        for k, v in zip(("box", "obj", "cls"), mloss.tolist()):
            self.history[k].append(v)

    def fit(self):
        self.args.save_dir.mkdir(parents=True, exist_ok=True)
        for epoch in range(self.args.epochs):
            self.train_epoch(epoch)
            torch.save({"epoch": epoch, "model": self.model.state_dict(), "history": self.history},
                       self.args.save_dir / "last.pt")
        LOGGER.info("done, %d batches needed OOM recovery", self.oom_batches)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    Trainer(parse_args()).fit()
