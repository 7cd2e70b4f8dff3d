from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class Detector(nn.Module):
    def __init__(self, num_classes: int = 20) -> None:
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 64, 3, 2, 1), nn.ReLU(), nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.cls = nn.Linear(128, num_classes)
        self.box = nn.Linear(128, 4)

    def forward(self, x):
        f = self.backbone(x)
        return self.cls(f), self.box(f)


def train_epoch(model: Detector, loader, optimizer, epoch: int) -> OrderedDict:
    model.train()
    results: OrderedDict[int, dict] = OrderedDict()
    for batch_idx, (img, labels, boxes) in enumerate(loader):
        img, labels, boxes = img.cuda(), labels.cuda(), boxes.cuda()
        cls_logits, box_pred = model(img)
        cls_loss = F.cross_entropy(cls_logits, labels)
        box_loss = F.smooth_l1_loss(box_pred, boxes)
        loss = cls_loss + 5.0 * box_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        results[batch_idx] = {"cls_loss": cls_loss, "box_loss": box_loss, "boxes": box_pred}  # leak
    return results


def summarize(results: OrderedDict) -> str:
    cls = sum(r["cls_loss"].item() for r in results.values()) / len(results)
    box = sum(r["box_loss"].item() for r in results.values()) / len(results)
    return f"cls={cls:.3f} box={box:.3f}"


def main(loader, epochs: int = 12) -> None:
    model = Detector().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=1e-4)
    for epoch in range(epochs):
        res = train_epoch(model, loader, opt, epoch)
        print(epoch, summarize(res))
