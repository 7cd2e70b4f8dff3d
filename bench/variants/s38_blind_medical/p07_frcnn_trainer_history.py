import json
import logging
import os
import time

import torch
import torchvision
from torch.utils.data import DataLoader
from torchvision.models.detection import fasterrcnn_resnet50_fpn
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor

from detection.datasets import CocoDetection, collate_fn, get_transform

log = logging.getLogger("frcnn")


class DetectionTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.device = torch.device(cfg["device"])
        self.model = self._build_model(cfg["num_classes"]).to(self.device)
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.SGD(params, lr=cfg["lr"], momentum=0.9, weight_decay=1e-4)
        self.lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(
            self.optimizer, milestones=cfg["lr_steps"], gamma=0.1)
        self.global_step = 0
        self.loss_history = []
        self.epoch_times = []

    @staticmethod
    def _build_model(num_classes):
        model = fasterrcnn_resnet50_fpn(weights="DEFAULT")
        in_features = model.roi_heads.box_predictor.cls_score.in_features
        model.roi_heads.box_predictor = FastRCNNPredictor(in_features, num_classes)
        return model

    def _warmup_factor(self):
        warm = self.cfg["warmup_iters"]
        if self.global_step >= warm:
            return 1.0
        alpha = self.global_step / warm
        return 0.001 * (1 - alpha) + alpha

    def train_step(self, images, targets):
        images = [img.to(self.device) for img in images]
        targets = [{k: v.to(self.device) for k, v in t.items()} for t in targets]

        loss_dict = self.model(images, targets)
        losses = sum(loss for loss in loss_dict.values())

        if not torch.isfinite(losses):
            raise FloatingPointError(f"non-finite loss at step {self.global_step}: {loss_dict}")

        for g in self.optimizer.param_groups:
            g["lr"] = self.cfg["lr"] * self._warmup_factor()
        self.optimizer.zero_grad()
        losses.backward()
        self.optimizer.step()
        self.global_step += 1

        self.loss_history.append({k: v.detach() for k, v in loss_dict.items()})  # leak
        return losses.item()

    def recent_losses(self, window=20):
        recent = self.loss_history[-window:]
        if not recent:
            return {}
        return {k: sum(float(d[k]) for d in recent) / len(recent) for k in recent[0]}

    def train_epoch(self, loader, epoch):
        self.model.train()
        t0 = time.time()
        for i, (images, targets) in enumerate(loader):
            total = self.train_step(images, targets)
            if i % self.cfg["log_every"] == 0:
                smooth = self.recent_losses()
                parts = ", ".join(f"{k}: {v:.4f}" for k, v in smooth.items())
                log.info("epoch %d it %d/%d loss %.4f (%s)", epoch, i, len(loader), total, parts)
        self.lr_scheduler.step()
        self.epoch_times.append(time.time() - t0)

    def save(self, path):
        torch.save({"model": self.model.state_dict(),
                    "optimizer": self.optimizer.state_dict(),
                    "step": self.global_step}, path)


def main(cfg_path="configs/frcnn_coco.json"):
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    with open(cfg_path) as f:
        cfg = json.load(f)
    dataset = CocoDetection(cfg["img_dir"], cfg["ann_file"], transforms=get_transform(train=True))
    loader = DataLoader(dataset, batch_size=cfg["batch_size"], shuffle=True,
                        num_workers=cfg.get("workers", 4), collate_fn=collate_fn)
    trainer = DetectionTrainer(cfg)
    os.makedirs(cfg["output_dir"], exist_ok=True)
    for epoch in range(cfg["epochs"]):
        trainer.train_epoch(loader, epoch)
        trainer.save(os.path.join(cfg["output_dir"], f"model_{epoch:02d}.pth"))
    log.info("torchvision %s, mean epoch time %.1fs", torchvision.__version__,
             sum(trainer.epoch_times) / len(trainer.epoch_times))


if __name__ == "__main__":
    main()
