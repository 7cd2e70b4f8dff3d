"""Sliding-window inference for whole-slide / large-tile segmentation.

Example:
    python infer_tiles.py --ckpt runs/unet_r34/best.pth --images data/test/images \
        --out preds/ --tile 512 --overlap 0.5
"""
import argparse
import logging
import os
from pathlib import Path
from typing import Iterator, List, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

from models import build_segmenter

logger = logging.getLogger("infer_tiles")

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def gaussian_weight(size: int, sigma_scale: float = 0.125) -> torch.Tensor:
    """2D gaussian importance map, as in nnU-Net, to down-weight tile borders."""
    coords = torch.arange(size, dtype=torch.float32) - (size - 1) / 2.0
    sigma = size * sigma_scale
    g = torch.exp(-(coords ** 2) / (2 * sigma ** 2))
    w = g[:, None] * g[None, :]
    w = w / w.max()
    return w.clamp_min(1e-3)


def tile_origins(h: int, w: int, tile: int, overlap: float) -> Iterator[Tuple[int, int]]:
    stride = max(1, int(tile * (1.0 - overlap)))
    ys = list(range(0, max(h - tile, 0) + 1, stride))
    xs = list(range(0, max(w - tile, 0) + 1, stride))
    if ys[-1] + tile < h:
        ys.append(h - tile)
    if xs[-1] + tile < w:
        xs.append(w - tile)
    for y in ys:
        for x in xs:
            yield y, x


def load_image(path: Path) -> torch.Tensor:
    arr = np.asarray(Image.open(path).convert("RGB"), dtype=np.float32) / 255.0
    t = torch.from_numpy(arr).permute(2, 0, 1)
    mean = torch.tensor(MEAN).view(3, 1, 1)
    std = torch.tensor(STD).view(3, 1, 1)
    return (t - mean) / std


class TilePredictor:
    def __init__(self, net, num_classes, tile=512, overlap=0.5, device="cuda"):
        self.net = net
        self.num_classes = num_classes
        self.tile = tile
        self.overlap = overlap
        self.device = torch.device(device)
        self.weight = gaussian_weight(tile).to(self.device)

    def _pad(self, image: torch.Tensor):
        _, h, w = image.shape
        ph = max(0, self.tile - h)
        pw = max(0, self.tile - w)
        if ph or pw:
            image = F.pad(image, (0, pw, 0, ph), mode="reflect")
        return image, (ph, pw)

    def _forward_tile(self, patch: torch.Tensor) -> torch.Tensor:
        out = self.net(patch)
        if isinstance(out, (list, tuple)):
            # deep-supervision heads: first one is full resolution
            out = out[0]
        return F.softmax(out, dim=1)[0]

    def predict(self, image: torch.Tensor) -> np.ndarray:
        image, (ph, pw) = self._pad(image)
        _, H, W = image.shape
        t = self.tile
        origins = list(tile_origins(H, W, t, self.overlap))
        tile_probs: List[torch.Tensor] = []
        for y, x in origins:
            patch = image[:, y:y + t, x:x + t].unsqueeze(0).to(self.device, non_blocking=True)
            tile_probs.append(self._forward_tile(patch) * self.weight)  # leak

        acc = torch.zeros((self.num_classes, H, W), device=self.device)
        norm = torch.zeros((1, H, W), device=self.device)
        for (y, x), probs in zip(origins, tile_probs):
            acc[:, y:y + t, x:x + t] += probs
            norm[:, y:y + t, x:x + t] += self.weight
        seg = (acc / norm).argmax(dim=0)
        seg = seg[: H - ph, : W - pw]
        return seg.to(torch.uint8).cpu().numpy()


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--ckpt", required=True)
    p.add_argument("--arch", default="unet_r34")
    p.add_argument("--num-classes", type=int, default=6)
    p.add_argument("--images", required=True)
    p.add_argument("--out", default="preds")
    p.add_argument("--tile", type=int, default=512)
    p.add_argument("--overlap", type=float, default=0.5)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    os.makedirs(args.out, exist_ok=True)

    net = build_segmenter(args.arch, num_classes=args.num_classes)
    state = torch.load(args.ckpt, map_location="cpu")
    net.load_state_dict(state.get("model", state))
    net.to(args.device).eval()

    predictor = TilePredictor(net, args.num_classes, tile=args.tile,
                              overlap=args.overlap, device=args.device)
    paths = sorted(Path(args.images).glob("*.png"))
    logger.info("running on %d images", len(paths))
    for i, path in enumerate(paths):
        img = load_image(path)
        mask = predictor.predict(img)
        Image.fromarray(mask).save(Path(args.out) / path.name)
        if i % 20 == 0:
            logger.info("[%d/%d] %s -> %s", i + 1, len(paths), path.name, mask.shape)


if __name__ == "__main__":
    main()
