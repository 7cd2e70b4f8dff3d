"""Batch inference for a Faster R-CNN detector on large whole-slide tiles."""
import argparse
import json
import os

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision.models.detection import fasterrcnn_resnet50_fpn
from torchvision.transforms import functional as TF


class TileFolder(Dataset):
    def __init__(self, folder, exts=(".png", ".jpg", ".tif")):
        self.paths = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.lower().endswith(exts))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        img = Image.open(self.paths[idx]).convert("RGB")
        return TF.to_tensor(img), os.path.basename(self.paths[idx])


def list_collate(batch):
    imgs, names = zip(*batch)
    return list(imgs), list(names)


class Detector:
    def __init__(self, weights, num_classes, score_thresh=0.3, device="cuda"):
        self.device = torch.device(device)
        self.model = fasterrcnn_resnet50_fpn(num_classes=num_classes, box_score_thresh=score_thresh)
        self.model.load_state_dict(torch.load(weights, map_location="cpu"))
        self.model.to(self.device).eval()

    @torch.no_grad()
    def _run(self, images):
        return self.model([im.to(self.device, non_blocking=True) for im in images])

    @torch.no_grad()
    def _run_one_by_one(self, images):
        outputs = []
        for im in images:
            outputs.extend(self.model([im.to(self.device)]))
        return outputs

    def predict(self, images):
        try:
            outputs = self._run(images)
        except RuntimeError as e:
            if "out of memory" not in str(e):
                raise
            torch.cuda.empty_cache()
            outputs = self._run_one_by_one(images)  # leak
        return [{k: v.cpu().numpy() for k, v in o.items()} for o in outputs]


def to_records(name, det, label_map):
    recs = []
    for box, score, label in zip(det["boxes"], det["scores"], det["labels"]):
        x1, y1, x2, y2 = box.tolist()
        recs.append({
            "file_name": name,
            "bbox": [round(x1, 1), round(y1, 1), round(x2 - x1, 1), round(y2 - y1, 1)],
            "score": round(float(score), 4),
            "category": label_map.get(int(label), str(int(label))),
        })
    return recs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tiles", required=True)
    parser.add_argument("--weights", required=True)
    parser.add_argument("--num-classes", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--score-thresh", type=float, default=0.3)
    parser.add_argument("--out", default="detections.json")
    args = parser.parse_args()

    label_map = {1: "mitosis", 2: "non_mitosis"}
    detector = Detector(args.weights, args.num_classes, args.score_thresh)
    loader = DataLoader(TileFolder(args.tiles), batch_size=args.batch_size, num_workers=4,
                        collate_fn=list_collate)
    records = []
    for i, (images, names) in enumerate(loader):
        for name, det in zip(names, detector.predict(images)):
            records.extend(to_records(name, det, label_map))
        if i % 20 == 0:
            print(f"{i * args.batch_size}/{len(loader.dataset)} tiles, {len(records)} detections")
    with open(args.out, "w") as f:
        json.dump(records, f)
    scores = np.array([r["score"] for r in records]) if records else np.zeros(0)
    print(f"wrote {len(records)} detections, mean score {scores.mean() if scores.size else 0:.3f}")


if __name__ == "__main__":
    main()
