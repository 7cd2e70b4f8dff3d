"""Train a RetinaNet-style single-shot detector with focal loss."""
import argparse
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torchvision.ops import sigmoid_focal_loss

from detkit.data import build_loader

log = logging.getLogger("detkit")
NUM_CLASSES = 20
NUM_ANCHORS = 3


class Detector(nn.Module):
    def __init__(self, num_classes: int = NUM_CLASSES):
        super().__init__()
        backbone = torchvision.models.resnet34(weights="IMAGENET1K_V1")
        self.stem = nn.Sequential(backbone.conv1, backbone.bn1, backbone.relu, backbone.maxpool,
                                  backbone.layer1)
        self.layer2, self.layer3, self.layer4 = backbone.layer2, backbone.layer3, backbone.layer4
        self.num_classes = num_classes
        self.cls_heads = nn.ModuleList(nn.Conv2d(c, NUM_ANCHORS * num_classes, 3, padding=1)
                                       for c in (128, 256, 512))
        self.reg_heads = nn.ModuleList(nn.Conv2d(c, NUM_ANCHORS * 4, 3, padding=1)
                                       for c in (128, 256, 512))

    def forward(self, x):
        c2 = self.layer2(self.stem(x))
        c3 = self.layer3(c2)
        c4 = self.layer4(c3)
        cls_out, reg_out = [], []
        for feat, ch, rh in zip((c2, c3, c4), self.cls_heads, self.reg_heads):
            b, _, h, w = feat.shape
            cls = ch(feat).view(b, NUM_ANCHORS, self.num_classes, h, w)
            reg = rh(feat).view(b, NUM_ANCHORS, 4, h, w)
            cls_out.append(cls.permute(0, 1, 3, 4, 2).reshape(b, -1, self.num_classes))
            reg_out.append(reg.permute(0, 1, 3, 4, 2).reshape(b, -1, 4))
        return torch.cat(cls_out, 1), torch.cat(reg_out, 1)


def detection_loss(cls_pred, reg_pred, cls_t, reg_t):
    valid = cls_t >= 0
    pos = cls_t > 0
    num_pos = pos.sum().clamp(min=1).float()
    onehot = F.one_hot(cls_t.clamp(min=0), NUM_CLASSES + 1)[..., 1:].float()
    cls_loss = sigmoid_focal_loss(cls_pred[valid], onehot[valid], reduction="sum") / num_pos
    reg_loss = F.smooth_l1_loss(reg_pred[pos], reg_t[pos], reduction="sum") / num_pos
    return cls_loss, reg_loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-root", required=True)
    ap.add_argument("--img-size", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=24)
    ap.add_argument("--lr", type=float, default=0.01)
    cfg = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda")

    loader = build_loader(cfg, train=True)
    model = Detector().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, [16, 22], 0.1)
    for epoch in range(cfg.epochs):
        model.train()
        for it, (imgs, cls_t, reg_t) in enumerate(loader):
            imgs, cls_t, reg_t = imgs.to(device), cls_t.to(device), reg_t.to(device)
            cls_pred, reg_pred = model(imgs)
            cls_loss, reg_loss = detection_loss(cls_pred, reg_pred, cls_t, reg_t)
            loss = cls_loss + reg_loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            if it % 50 == 0:
                log.info("ep %d it %d cls %.4f reg %.4f", epoch, it, cls_loss.item(), reg_loss.item())
        sched.step()
        torch.save(model.state_dict(), f"det_ep{epoch}.pt")


if __name__ == "__main__":
    main()
