"""Cross-batch memory for metric learning on person re-ID (XBM-style)."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from reid.data import RandomIdentitySampler, build_train_set
from reid.models import build_backbone


class CrossBatchMemory(object):
    def __init__(self, feat_dim, max_size):
        self.feat_dim = feat_dim
        self.max_size = max_size
        self.feats = []
        self.targets = []

    def enqueue(self, feats, targets):
        self.feats.append(feats.detach())  # leak
        self.targets.append(targets)

    def get(self):
        if not self.feats:
            return None, None
        return torch.cat(self.feats, 0), torch.cat(self.targets, 0)

    def __len__(self):
        return sum(f.size(0) for f in self.feats)


def contrastive_loss(q, q_t, k, k_t, margin=0.5):
    sim = q @ k.t()
    pos_mask = q_t.unsqueeze(1) == k_t.unsqueeze(0)
    neg_mask = ~pos_mask
    pos_loss = ((1 - sim) * pos_mask.float()).sum() / pos_mask.float().sum().clamp_min(1)
    neg = F.relu(sim - margin) * neg_mask.float()
    neg_loss = neg.sum() / (neg > 0).float().sum().clamp_min(1)
    return pos_loss + neg_loss


class Embedder(nn.Module):
    def __init__(self, backbone, in_dim=2048, dim=512):
        super(Embedder, self).__init__()
        self.backbone = backbone
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(in_dim, dim)
        self.bn = nn.BatchNorm1d(dim)

    def forward(self, x):
        f = self.pool(self.backbone(x)).flatten(1)
        return F.normalize(self.bn(self.fc(f)), dim=1)


def train(args):
    device = torch.device("cuda")
    model = Embedder(build_backbone(args.arch, pretrained=True)).to(device)
    model = nn.DataParallel(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)
    train_set = build_train_set(args.root)
    loader = DataLoader(train_set, batch_size=args.batch_size,
                        sampler=RandomIdentitySampler(train_set, args.batch_size, args.num_instances),
                        num_workers=8, drop_last=True, pin_memory=True)
    memory = CrossBatchMemory(512, args.memory_size)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for imgs, pids, _ in loader:
            imgs, pids = imgs.to(device), pids.to(device)
            feats = model(imgs)
            loss = contrastive_loss(feats, pids, feats, pids)
            if step >= args.xbm_start:
                memory.enqueue(feats, pids)
                mem_f, mem_t = memory.get()
                loss = loss + args.xbm_weight * contrastive_loss(feats, pids, mem_f, mem_t)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % 100 == 0:
                print("epoch %d step %d loss %.4f memory %d" % (epoch, step, loss.item(), len(memory)))
        torch.save(model.module.state_dict(), "%s/embedder_%d.pth" % (args.out, epoch))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="/data/msmt17")
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--num-instances", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3.5e-4)
    parser.add_argument("--memory-size", type=int, default=8192)
    parser.add_argument("--xbm-start", type=int, default=1000)
    parser.add_argument("--xbm-weight", type=float, default=1.0)
    parser.add_argument("--out", default="logs/xbm")
    train(parser.parse_args())
