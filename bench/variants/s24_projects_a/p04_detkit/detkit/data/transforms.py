"""Image / box transforms and anchor target encoding."""
import random
from typing import Tuple

import numpy as np
import torch
from PIL import Image
from torchvision.ops import box_iou

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def resize(img: Image.Image, boxes: np.ndarray, size: int) -> Tuple[Image.Image, np.ndarray]:
    w, h = img.size
    img = img.resize((size, size), Image.BILINEAR)
    scale = np.array([size / w, size / h, size / w, size / h], dtype=np.float32)
    return img, boxes * scale


def random_hflip(img: Image.Image, boxes: np.ndarray, p: float = 0.5):
    if random.random() < p:
        w = img.width
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
        boxes = boxes.copy()
        boxes[:, [0, 2]] = w - boxes[:, [2, 0]]
    return img, boxes


def to_tensor(img: Image.Image) -> torch.Tensor:
    arr = np.asarray(img, dtype=np.float32) / 255.0
    arr = (arr - np.array(MEAN, dtype=np.float32)) / np.array(STD, dtype=np.float32)
    return torch.from_numpy(arr).permute(2, 0, 1).contiguous()


def make_anchors(img_size: int, strides=(8, 16, 32), sizes=(32, 64, 128)) -> torch.Tensor:
    anchors = []
    for stride, size in zip(strides, sizes):
        n = img_size // stride
        cs = (torch.arange(n, dtype=torch.float32) + 0.5) * stride
        cy, cx = torch.meshgrid(cs, cs, indexing="ij")
        for ratio in (0.5, 1.0, 2.0):
            w, h = size * ratio ** 0.5, size / ratio ** 0.5
            anchors.append(torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], -1).reshape(-1, 4))
    return torch.cat(anchors)


class AnchorEncoder:
    """Match ground-truth boxes to anchors and produce regression/cls targets."""

    def __init__(self, anchors: torch.Tensor, pos_iou: float = 0.5, neg_iou: float = 0.4,
                 variances=(0.1, 0.2)):
        self.anchors = anchors
        self.pos_iou, self.neg_iou = pos_iou, neg_iou
        self.variances = variances

    def encode(self, boxes: np.ndarray, labels: np.ndarray):
        anchors = self.anchors
        if torch.cuda.is_available():
            anchors = anchors.cuda()  # leak
        gt = torch.as_tensor(boxes, dtype=torch.float32, device=anchors.device)
        lbl = torch.as_tensor(labels, dtype=torch.long, device=anchors.device)
        cls_t = torch.zeros(anchors.shape[0], dtype=torch.long, device=anchors.device)
        reg_t = torch.zeros_like(anchors)
        if gt.numel() == 0:
            return cls_t.cpu(), reg_t.cpu()
        iou = box_iou(anchors, gt)
        best_iou, best_gt = iou.max(dim=1)
        cls_t = lbl[best_gt] + 1
        cls_t[best_iou < self.pos_iou] = -1          # ignore
        cls_t[best_iou < self.neg_iou] = 0           # background
        matched = gt[best_gt]
        a_wh = anchors[:, 2:] - anchors[:, :2]
        a_c = anchors[:, :2] + 0.5 * a_wh
        g_wh = matched[:, 2:] - matched[:, :2]
        g_c = matched[:, :2] + 0.5 * g_wh
        reg_t = torch.cat([(g_c - a_c) / (a_wh * self.variances[0]),
                           torch.log(g_wh / a_wh + 1e-6) / self.variances[1]], dim=1)
        return cls_t.cpu(), reg_t.cpu()
