"""KITTI-style LiDAR dataset with on-the-fly voxelisation.

Voxelisation of ~120k points per sweep is the bottleneck on CPU, so the
scatter/unique part runs on the GPU. Because __getitem__ touches CUDA the
loader must stay in the main process (num_workers=0).
"""
import glob
import logging
import os

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger(__name__)

DEFAULTS = dict(
    root="/data/kitti/training",
    voxel_size=(0.05, 0.05, 0.1),
    pc_range=(0.0, -40.0, -3.0, 70.4, 40.0, 1.0),
    max_points_per_voxel=5,
    batch_size=4,
    num_workers=0,  # CUDA in __getitem__: do not fork workers
)


def _filter_range(pts, pc_range):
    lo, hi = np.asarray(pc_range[:3]), np.asarray(pc_range[3:])
    keep = np.all((pts[:, :3] >= lo) & (pts[:, :3] < hi), axis=1)
    return pts[keep]


def voxelize(points, voxel_size, pc_range, max_pts):
    """Returns (voxels[M, max_pts, 4], coords[M, 3], num_points[M])."""
    pts = torch.from_numpy(points).to("cuda")
    vs = torch.tensor(voxel_size, device=pts.device)
    lo = torch.tensor(pc_range[:3], device=pts.device)
    coords = ((pts[:, :3] - lo) / vs).long()
    grid = ((torch.tensor(pc_range[3:], device=pts.device) - lo) / vs).long()
    lin = (coords[:, 2] * grid[1] + coords[:, 1]) * grid[0] + coords[:, 0]
    uniq, inv, counts = torch.unique(lin, return_inverse=True, return_counts=True)
    order = torch.argsort(inv, stable=True)
    starts = torch.cumsum(counts, 0) - counts
    rank = torch.arange(pts.size(0), device=pts.device) - starts[inv[order]]
    keep = rank < max_pts
    voxels = pts.new_zeros(uniq.numel(), max_pts, pts.size(1))
    voxels[inv[order][keep], rank[keep]] = pts[order][keep]
    vox_coords = torch.stack([uniq // (grid[0] * grid[1]), (uniq // grid[0]) % grid[1], uniq % grid[0]], 1)
    return voxels.cpu(), vox_coords.cpu(), counts.clamp(max=max_pts).cpu()


class KittiVoxelDataset(Dataset):
    def __init__(self, root, voxel_size, pc_range, max_points_per_voxel, split="train", **_):
        self.files = sorted(glob.glob(os.path.join(root, "velodyne", "*.bin")))
        self.label_dir = os.path.join(root, "label_2")
        self.voxel_size = voxel_size
        self.pc_range = pc_range
        self.max_pts = max_points_per_voxel
        self.train = split == "train"
        log.info("KittiVoxelDataset: %d sweeps (%s)", len(self.files), split)

    def __len__(self):
        return len(self.files)

    def _load_boxes(self, idx):
        name = os.path.splitext(os.path.basename(self.files[idx]))[0]
        boxes = []
        with open(os.path.join(self.label_dir, name + ".txt")) as f:
            for line in f:
                p = line.split()
                if p[0] in ("Car", "Pedestrian", "Cyclist"):
                    boxes.append([float(v) for v in p[8:15]])
        return np.asarray(boxes, dtype=np.float32).reshape(-1, 7)

    def __getitem__(self, idx):
        pts = np.fromfile(self.files[idx], dtype=np.float32).reshape(-1, 4)
        if self.train:
            pts = pts[np.random.permutation(len(pts))]
            if np.random.rand() < 0.5:
                pts[:, 1] = -pts[:, 1]
        pts = _filter_range(pts, self.pc_range)
        voxels, coords, npts = voxelize(pts, self.voxel_size, self.pc_range, self.max_pts)
        return {"voxels": voxels, "coords": coords, "num_points": npts, "gt_boxes": torch.from_numpy(self._load_boxes(idx))}


def collate_voxels(samples):
    out = {"voxels": [], "coords": [], "num_points": [], "gt_boxes": []}
    for b, s in enumerate(samples):
        out["voxels"].append(s["voxels"])
        out["coords"].append(torch.nn.functional.pad(s["coords"], (1, 0), value=b))
        out["num_points"].append(s["num_points"])
        out["gt_boxes"].append(s["gt_boxes"])
    return {k: (torch.cat(v) if k != "gt_boxes" else v) for k, v in out.items()}


def build_train_loader(cfg=None):
    cfg = {**DEFAULTS, **(cfg or {})}
    ds = KittiVoxelDataset(**cfg)
    if cfg["num_workers"]:
        log.warning("num_workers=%d ignored: voxelisation runs on the GPU", cfg["num_workers"])
    return DataLoader(ds, batch_size=cfg["batch_size"], shuffle=True, num_workers=0,
                      collate_fn=collate_voxels, drop_last=True)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    for i, batch in enumerate(build_train_loader()):
        print(i, batch["voxels"].shape, batch["coords"].shape)
        if i == 5:
            break
