"""Detector inference with graceful fallback when a batch does not fit on the GPU."""
import argparse
import gc
import json
import logging
import os

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision.models.detection import retinanet_resnet50_fpn
from torchvision.transforms import functional as TF

logger = logging.getLogger(__name__)


class Images(Dataset):
    def __init__(self, root):
        self.files = sorted(f for f in os.listdir(root) if f.endswith((".jpg", ".png")))
        self.root = root

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return TF.to_tensor(Image.open(os.path.join(self.root, self.files[i])).convert("RGB")), self.files[i]


class SafePredictor:
    def __init__(self, model, device="cuda", min_chunk=1):
        self.model = model.to(device).eval()
        self.device = device
        self.min_chunk = min_chunk

    @torch.inference_mode()
    def _forward(self, images):
        outs = self.model([im.to(self.device) for im in images])
        return [{k: v.cpu() for k, v in o.items()} for o in outs]

    def __call__(self, images):
        chunk = len(images)
        while True:
            oom = False
            try:
                results = []
                for s in range(0, len(images), chunk):
                    results.extend(self._forward(images[s:s + chunk]))
                return results
            except torch.cuda.OutOfMemoryError:
                oom = True
            if oom:
                gc.collect()
                torch.cuda.empty_cache()
                if chunk <= self.min_chunk:
                    raise RuntimeError(f"cannot fit even {chunk} image(s) on {self.device}")
                chunk = max(self.min_chunk, chunk // 2)
                logger.warning("OOM, retrying with chunks of %d", chunk)


def main():
    logging.basicConfig(level=logging.INFO)
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", required=True)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--num-classes", type=int, default=91)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--out", default="preds.json")
    args = ap.parse_args()

    model = retinanet_resnet50_fpn(num_classes=args.num_classes)
    model.load_state_dict(torch.load(args.weights, map_location="cpu"))
    predictor = SafePredictor(model)
    loader = DataLoader(Images(args.images), batch_size=args.batch_size, num_workers=4,
                        collate_fn=lambda b: tuple(zip(*b)))

    out = {}
    for images, names in loader:
        for name, det in zip(names, predictor(list(images))):
            keep = det["scores"] > 0.05
            out[name] = {
                "boxes": det["boxes"][keep].tolist(),
                "scores": det["scores"][keep].tolist(),
                "labels": det["labels"][keep].tolist(),
            }
    with open(args.out, "w") as f:
        json.dump(out, f)
    logger.info("saved predictions for %d images", len(out))


if __name__ == "__main__":
    main()
