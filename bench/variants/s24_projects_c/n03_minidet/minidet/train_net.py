"""Train Faster R-CNN on a COCO-format dataset.

    python -m minidet.train_net --images data/train2017 --ann data/annotations/instances_train2017.json
"""
import argparse
import logging

import torch
import torchvision
from torch.utils.data import DataLoader
from torchvision.transforms import v2 as T

from minidet import hooks
from minidet.base import SimpleTrainer

logger = logging.getLogger("minidet")


class CocoDetection(torchvision.datasets.CocoDetection):
    def __init__(self, img_folder, ann_file, train=True):
        super().__init__(img_folder, ann_file)
        self.tf = T.Compose([T.ToImage(), T.RandomHorizontalFlip(0.5 if train else 0.0),
                             T.ToDtype(torch.float32, scale=True)])

    def __getitem__(self, idx):
        img, anns = super().__getitem__(idx)
        anns = [a for a in anns if a.get("iscrowd", 0) == 0 and a["bbox"][2] > 1 and a["bbox"][3] > 1]
        boxes = torch.tensor([a["bbox"] for a in anns], dtype=torch.float32).reshape(-1, 4)
        boxes[:, 2:] += boxes[:, :2]
        target = {"boxes": torchvision.tv_tensors.BoundingBoxes(boxes, format="XYXY", canvas_size=img.size[::-1]),
                  "labels": torch.tensor([a["category_id"] for a in anns], dtype=torch.int64)}
        img, target = self.tf(img, target)
        return img, {"boxes": target["boxes"].as_subclass(torch.Tensor), "labels": target["labels"]}


def collate(batch):
    return tuple(zip(*batch))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", required=True)
    ap.add_argument("--ann", required=True)
    ap.add_argument("--max-iter", type=int, default=90_000)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--output", default="output/frcnn_r50")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s %(name)s]: %(message)s")

    ds = CocoDetection(args.images, args.ann)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=8,
                        collate_fn=collate, persistent_workers=True, drop_last=True)
    model = torchvision.models.detection.fasterrcnn_resnet50_fpn_v2(weights=None, weights_backbone="DEFAULT",
                                                                    num_classes=91).cuda()
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.MultiStepLR(optimizer, [60_000, 80_000], gamma=0.1)

    trainer = SimpleTrainer(model, loader, optimizer)
    trainer.register_hooks([
        hooks.IterationTimer(),
        hooks.LRScheduler(sched),
        hooks.PeriodicCheckpointer(args.output, period=5000),
        hooks.PeriodicWriter(period=20),
    ])
    trainer.train(0, args.max_iter)


if __name__ == "__main__":
    main()
