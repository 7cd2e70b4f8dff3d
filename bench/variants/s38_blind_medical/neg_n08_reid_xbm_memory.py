"""Cross-batch memory (ring buffer) for metric learning on person re-ID."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from reid.data import RandomIdentitySampler, build_train_set
from reid.models import build_backbone


class XBM(nn.Module):
    def __init__(self, size, dim):
        super().__init__()
        self.size = size
        self.register_buffer("feats", torch.zeros(size, dim))
        self.register_buffer("targets", torch.full((size,), -1, dtype=torch.long))
        self.ptr = 0
        self.full = False

    @torch.no_grad()
    def enqueue_dequeue(self, feats, targets):
        n = feats.size(0)
        if self.ptr + n > self.size:
            self.ptr = 0
            self.full = True
        self.feats[self.ptr:self.ptr + n] = feats.detach()
        self.targets[self.ptr:self.ptr + n] = targets
        self.ptr += n

    def get(self):
        if self.full:
            return self.feats, self.targets
        return self.feats[:self.ptr], self.targets[:self.ptr]


def multi_similarity_loss(q, q_t, k, k_t, alpha=2.0, beta=50.0, base=0.5):
    sim = q @ k.t()
    pos = (q_t[:, None] == k_t[None, :]).float()
    neg = 1.0 - pos
    pos_term = torch.log1p((torch.exp(-alpha * (sim - base)) * pos).sum(1)) / alpha
    neg_term = torch.log1p((torch.exp(beta * (sim - base)) * neg).sum(1)) / beta
    return (pos_term + neg_term).mean()


class EmbeddingNet(nn.Module):
    def __init__(self, backbone, dim=512):
        super().__init__()
        self.backbone = backbone
        self.neck = nn.Sequential(nn.Linear(2048, dim), nn.BatchNorm1d(dim))

    def forward(self, x):
        f = F.adaptive_avg_pool2d(self.backbone(x), 1).flatten(1)
        return F.normalize(self.neck(f), dim=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/msmt17")
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--instances", type=int, default=4)
    ap.add_argument("--memory", type=int, default=8192)
    ap.add_argument("--start", type=int, default=1000)
    args = ap.parse_args()

    dev = torch.device("cuda")
    net = EmbeddingNet(build_backbone("resnet50", pretrained=True)).to(dev)
    xbm = XBM(args.memory, 512).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=3.5e-4, weight_decay=5e-4)
    ds = build_train_set(args.root)
    loader = DataLoader(ds, batch_size=args.batch_size,
                        sampler=RandomIdentitySampler(ds, args.batch_size, args.instances),
                        num_workers=8, drop_last=True)

    it = 0
    for epoch in range(args.epochs):
        net.train()
        running = 0.0
        for imgs, pids, _ in loader:
            imgs, pids = imgs.to(dev, non_blocking=True), pids.to(dev, non_blocking=True)
            emb = net(imgs)
            loss = multi_similarity_loss(emb, pids, emb, pids)
            if it >= args.start:
                xbm.enqueue_dequeue(emb, pids)
                mf, mt = xbm.get()
                loss = loss + multi_similarity_loss(emb, pids, mf, mt)
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.item()
            it += 1
        print(f"epoch {epoch} loss {running / len(loader):.4f} bank {'full' if xbm.full else xbm.ptr}")
        torch.save(net.state_dict(), f"embed_{epoch}.pth")


if __name__ == "__main__":
    main()
