"""Feature extraction and ranking for person re-identification."""
import argparse
import os.path as osp

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from reid.datasets import ImageDataset, build_market1501
from reid.models import build_model
from reid.transforms import build_test_transform


def evaluate_rank(distmat, q_pids, g_pids, q_camids, g_camids, max_rank=50):
    num_q = distmat.shape[0]
    indices = np.argsort(distmat, axis=1)
    matches = (g_pids[indices] == q_pids[:, np.newaxis]).astype(np.int32)
    all_cmc, all_ap = [], []
    for q in range(num_q):
        order = indices[q]
        keep = ~((g_pids[order] == q_pids[q]) & (g_camids[order] == q_camids[q]))
        raw = matches[q][keep]
        if not raw.any():
            continue
        cmc = raw.cumsum()
        cmc[cmc > 1] = 1
        all_cmc.append(cmc[:max_rank])
        num_rel = raw.sum()
        tmp = raw.cumsum() / (np.arange(len(raw)) + 1.0)
        all_ap.append((tmp * raw).sum() / num_rel)
    all_cmc = np.asarray(all_cmc).astype(np.float32).sum(0) / len(all_cmc)
    return all_cmc, float(np.mean(all_ap))


class FeatureExtractor:
    def __init__(self, model, device="cuda", flip=True, normalize=True):
        self.model = model.to(device)
        self.device = device
        self.flip = flip
        self.normalize = normalize

    @torch.inference_mode()
    def __call__(self, loader):
        self.model.eval()
        feats, pids, camids = [], [], []
        for imgs, pid, camid in loader:
            imgs = imgs.to(self.device, non_blocking=True)
            f = self.model(imgs)
            if self.flip:
                f = f + self.model(torch.flip(imgs, dims=[3]))
            if self.normalize:
                f = F.normalize(f, dim=1)
            feats.append(f.float().cpu())
            pids.extend(pid.tolist())
            camids.extend(camid.tolist())
        return torch.cat(feats, 0), np.asarray(pids), np.asarray(camids)


def compute_distmat(qf, gf, chunk=2048):
    rows = []
    for start in range(0, qf.size(0), chunk):
        q = qf[start:start + chunk]
        d = torch.cdist(q, gf).pow(2)
        rows.append(d.numpy())
    return np.concatenate(rows, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/market1501")
    ap.add_argument("--arch", default="resnet50_bnneck")
    ap.add_argument("--weights", required=True)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--no-flip", action="store_true")
    args = ap.parse_args()

    query, gallery = build_market1501(args.root)
    tf = build_test_transform(height=256, width=128)
    q_loader = DataLoader(ImageDataset(query, tf), batch_size=args.batch_size,
                          num_workers=args.workers, pin_memory=True)
    g_loader = DataLoader(ImageDataset(gallery, tf), batch_size=args.batch_size,
                          num_workers=args.workers, pin_memory=True)

    model = build_model(args.arch, num_classes=751)
    state = torch.load(args.weights, map_location="cpu")
    if "state_dict" in state:
        state = {k.replace("module.", ""): v for k, v in state["state_dict"].items()}
    model.load_state_dict(state, strict=False)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)

    extractor = FeatureExtractor(model, flip=not args.no_flip)
    qf, q_pids, q_camids = extractor(q_loader)
    gf, g_pids, g_camids = extractor(g_loader)
    print(f"query {tuple(qf.shape)} gallery {tuple(gf.shape)}")

    distmat = compute_distmat(qf, gf)
    cmc, mAP = evaluate_rank(distmat, q_pids, g_pids, q_camids, g_camids)
    print(f"mAP {mAP:.2%}  rank-1 {cmc[0]:.2%}  rank-5 {cmc[4]:.2%}  rank-10 {cmc[9]:.2%}")
    np.savez(osp.join(osp.dirname(args.weights), "features.npz"), qf=qf.numpy(), gf=gf.numpy())


if __name__ == "__main__":
    main()
