#!/usr/bin/env python3
# -*- coding:utf-8 -*-
import datetime
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from meters import MeterBuffer, gpu_mem_usage


class TinyDetector(nn.Module):
    """Single-box toy detector used to smoke-test the training loop."""

    def __init__(self, num_classes=20):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 32, 3, 2, 1), nn.SiLU(),
            nn.Conv2d(32, 64, 3, 2, 1), nn.SiLU(),
            nn.Conv2d(64, 128, 3, 2, 1), nn.SiLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.cls_head = nn.Linear(128, num_classes)
        self.reg_head = nn.Linear(128, 4)
        self.obj_head = nn.Linear(128, 1)

    def forward(self, x, targets):
        feat = self.backbone(x)
        cls_t, box_t, obj_t = targets
        cls_loss = F.cross_entropy(self.cls_head(feat), cls_t)
        iou_loss = F.smooth_l1_loss(self.reg_head(feat), box_t)
        obj_loss = F.binary_cross_entropy_with_logits(self.obj_head(feat).squeeze(1), obj_t)
        total_loss = 5.0 * iou_loss + cls_loss + obj_loss
        return {"total_loss": total_loss, "iou_loss": iou_loss,
                "conf_loss": obj_loss, "cls_loss": cls_loss}


class Trainer:
    def __init__(self, exp):
        self.exp = exp
        self.max_epoch = exp["max_epoch"]
        self.print_interval = exp["print_interval"]
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.meter = MeterBuffer(window_size=exp["print_interval"])
        self.model = TinyDetector(exp["num_classes"]).to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=exp["lr"],
                                         momentum=0.9, nesterov=True)
        n = exp["num_images"]
        ds = TensorDataset(torch.randn(n, 3, 64, 64), torch.randint(0, exp["num_classes"], (n,)),
                           torch.rand(n, 4), torch.randint(0, 2, (n,)).float())
        self.train_loader = DataLoader(ds, batch_size=exp["batch_size"], shuffle=True, drop_last=True)
        self.max_iter = len(self.train_loader)

    def train(self):
        for self.epoch in range(self.max_epoch):
            self.model.train()
            for self.iter, batch in enumerate(self.train_loader):
                self.train_one_iter(batch)
                self.after_iter()

    def train_one_iter(self, batch):
        iter_start_time = time.time()
        inps, cls_t, box_t, obj_t = [t.to(self.device) for t in batch]
        data_end_time = time.time()

        outputs = self.model(inps, (cls_t, box_t, obj_t))
        loss = outputs["total_loss"]
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

        lr = self.optimizer.param_groups[0]["lr"]
        iter_end_time = time.time()
        self.meter.update(
            iter_time=iter_end_time - iter_start_time,
            data_time=data_end_time - iter_start_time,
            lr=lr,
            **outputs,
        )

    def after_iter(self):
        if (self.iter + 1) % self.print_interval != 0:
            return
        left_iters = self.max_iter * self.max_epoch - (self.epoch * self.max_iter + self.iter + 1)
        eta_seconds = self.meter["iter_time"].global_avg * left_iters
        eta_str = "ETA: {}".format(datetime.timedelta(seconds=int(eta_seconds)))
        progress_str = "epoch: {}/{}, iter: {}/{}".format(
            self.epoch + 1, self.max_epoch, self.iter + 1, self.max_iter)
        loss_meter = self.meter.get_filtered_meter("loss")
        loss_str = ", ".join(["{}: {:.1f}".format(k, v.latest) for k, v in loss_meter.items()])
        time_meter = self.meter.get_filtered_meter("time")
        time_str = ", ".join(["{}: {:.3f}s".format(k, v.avg) for k, v in time_meter.items()])
        print("{}, mem: {:.0f}Mb, {}, {}, lr: {:.3e}, {}".format(
            progress_str, gpu_mem_usage(), time_str, loss_str, self.meter["lr"].latest, eta_str))
        self.meter.clear_meters()


if __name__ == "__main__":
    exp = dict(max_epoch=300, print_interval=20, num_classes=20, lr=0.01,
               num_images=2048, batch_size=16)
    Trainer(exp).train()
