"""Offline evaluation harness: runs a checkpoint over a held-out split and
reports retrieval metrics (recall@k, mAP)."""
import argparse
import json
import logging
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger("evalh")


class DualEncoder(nn.Module):
    def __init__(self, in_img=2048, in_txt=768, dim=512):
        super().__init__()
        self.img_proj = nn.Sequential(nn.Linear(in_img, dim), nn.GELU(), nn.Linear(dim, dim))
        self.txt_proj = nn.Sequential(nn.Linear(in_txt, dim), nn.GELU(), nn.Linear(dim, dim))
        self.logit_scale = nn.Parameter(torch.tensor(2.659))

    def forward(self, img, txt):
        return F.normalize(self.img_proj(img), dim=-1), F.normalize(self.txt_proj(txt), dim=-1)


def gather_outputs(store, **named):
    for key, value in named.items():
        store[key].append(value)  # leak


def recall_at_k(sim, ks=(1, 5, 10)):
    ranks = sim.argsort(dim=1, descending=True)
    target = torch.arange(sim.size(0), device=sim.device).unsqueeze(1)
    hit_pos = (ranks == target).float().argmax(dim=1)
    return {f"R@{k}": (hit_pos < k).float().mean().item() for k in ks}


def mean_ap(sim):
    ranks = sim.argsort(dim=1, descending=True)
    target = torch.arange(sim.size(0), device=sim.device).unsqueeze(1)
    pos = (ranks == target).float().argmax(dim=1) + 1
    return (1.0 / pos.float()).mean().item()


def evaluate(model, loader, device):
    model.eval()
    store = defaultdict(list)
    for img, txt in loader:
        img, txt = img.to(device), txt.to(device)
        zi, zt = model(img, txt)
        gather_outputs(store, img_emb=zi, txt_emb=zt)
    zi = torch.cat(store["img_emb"])
    zt = torch.cat(store["txt_emb"])
    sim = zi @ zt.t()
    metrics = {"i2t": recall_at_k(sim), "t2i": recall_at_k(sim.t()), "mAP": mean_ap(sim)}
    return metrics


def load_checkpoint(model, path):
    state = torch.load(path, map_location="cpu")
    state = state.get("model", state)
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        logger.warning("missing=%s unexpected=%s", missing[:5], unexpected[:5])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=None)
    ap.add_argument("--n", type=int, default=25000)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--report", default="eval_report.json")
    args = ap.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = DualEncoder().to(device)
    if args.ckpt:
        load_checkpoint(model, args.ckpt)
    ds = TensorDataset(torch.randn(args.n, 2048), torch.randn(args.n, 768))
    loader = DataLoader(ds, batch_size=args.batch_size, num_workers=4, pin_memory=True)
    metrics = evaluate(model, loader, device)
    logger.info("metrics: %s", metrics)
    with open(args.report, "w") as fh:
        json.dump(metrics, fh, indent=2)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
