"""LightningModule wrapping a small U-Net."""
from __future__ import annotations

import logging

import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F

from litseg import ConfusionMatrix, DiceCELoss, RunningMean

log = logging.getLogger(__name__)


def conv_block(c_in: int, c_out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(True),
        nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(True),
    )


class UNet(nn.Module):
    def __init__(self, in_ch: int = 3, num_classes: int = 21, base: int = 32):
        super().__init__()
        widths = [base, base * 2, base * 4, base * 8]
        self.downs = nn.ModuleList()
        c = in_ch
        for w in widths:
            self.downs.append(conv_block(c, w))
            c = w
        self.bottleneck = conv_block(widths[-1], widths[-1] * 2)
        self.ups = nn.ModuleList()
        self.up_convs = nn.ModuleList()
        c = widths[-1] * 2
        for w in reversed(widths):
            self.ups.append(nn.ConvTranspose2d(c, w, 2, stride=2))
            self.up_convs.append(conv_block(w * 2, w))
            c = w
        self.head = nn.Conv2d(widths[0], num_classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bottleneck(x)
        for up, conv, skip in zip(self.ups, self.up_convs, reversed(skips)):
            x = up(x)
            x = conv(torch.cat([x, skip], dim=1))
        return self.head(x)


class SegmentationModule(pl.LightningModule):
    def __init__(self, num_classes: int = 21, lr: float = 1e-3, weight_decay: float = 1e-4,
                 dice_weight: float = 0.5):
        super().__init__()
        self.save_hyperparameters()
        self.net = UNet(num_classes=num_classes)
        self.criterion = DiceCELoss(dice_weight=dice_weight)
        # cumulative since the start of fit(); shown in the progress bar
        self.train_loss = RunningMean("train_loss")
        self.val_cm = ConfusionMatrix(num_classes)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        images, masks = batch
        logits = self(images)
        loss = self.criterion(logits, masks)
        self.train_loss.update(loss, n=images.size(0))
        self.log("train/loss", loss, prog_bar=True)
        self.log("train/loss_avg", self.train_loss.compute(), prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        images, masks = batch
        logits = self(images)
        self.log("val/loss", self.criterion(logits, masks), sync_dist=True)
        self.val_cm.update(logits.argmax(1), masks)

    def on_validation_epoch_end(self):
        scores = self.val_cm.compute()
        self.log("val/miou", scores["miou"], prog_bar=True)
        self.log("val/pixel_acc", scores["pixel_acc"])
        self.val_cm.reset()

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr,
                                weight_decay=self.hparams.weight_decay)
        sched = torch.optim.lr_scheduler.OneCycleLR(
            opt, max_lr=self.hparams.lr, total_steps=self.trainer.estimated_stepping_batches)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}
