"""Pascal VOC dataset returning dense anchor targets."""
import logging
import os
import xml.etree.ElementTree as ET

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

from . import transforms as T

log = logging.getLogger(__name__)

VOC_CLASSES = (
    "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair",
    "cow", "diningtable", "dog", "horse", "motorbike", "person", "pottedplant",
    "sheep", "sofa", "train", "tvmonitor",
)


def parse_annotation(path: str):
    root = ET.parse(path).getroot()
    boxes, labels = [], []
    for obj in root.iter("object"):
        if int(obj.findtext("difficult", "0")):
            continue
        bb = obj.find("bndbox")
        boxes.append([float(bb.findtext(t)) - 1 for t in ("xmin", "ymin", "xmax", "ymax")])
        labels.append(VOC_CLASSES.index(obj.findtext("name").strip()))
    return np.array(boxes, dtype=np.float32).reshape(-1, 4), np.array(labels, dtype=np.int64)


class VOCDetection(Dataset):
    def __init__(self, root: str, image_set: str = "trainval", img_size: int = 512,
                 train: bool = True):
        self.root = root
        self.img_size = img_size
        self.train = train
        with open(os.path.join(root, "ImageSets", "Main", f"{image_set}.txt")) as f:
            self.ids = [line.strip() for line in f if line.strip()]
        self.encoder = T.AnchorEncoder(T.make_anchors(img_size))
        log.info("VOC %s: %d images", image_set, len(self.ids))

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, idx: int):
        img_id = self.ids[idx]
        img = Image.open(os.path.join(self.root, "JPEGImages", f"{img_id}.jpg")).convert("RGB")
        boxes, labels = parse_annotation(os.path.join(self.root, "Annotations", f"{img_id}.xml"))
        if self.train:
            img, boxes = T.random_hflip(img, boxes)
        img, boxes = T.resize(img, boxes, self.img_size)
        cls_t, reg_t = self.encoder.encode(boxes, labels)
        return T.to_tensor(img), cls_t, reg_t


def build_loader(cfg, train: bool = True) -> DataLoader:
    ds = VOCDetection(cfg.data_root, "trainval" if train else "test", cfg.img_size, train=train)
    return DataLoader(ds, batch_size=cfg.batch_size, shuffle=train,
                      num_workers=cfg.workers, pin_memory=True, drop_last=train,
                      persistent_workers=cfg.workers > 0)
