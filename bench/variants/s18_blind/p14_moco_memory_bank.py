"""Momentum-contrast pretraining head with an external negative bank.

Differs from the reference MoCo in that negatives are drawn uniformly from
the bank instead of using the whole queue, which lets us use a very large
bank while keeping the logits matrix small.
"""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ProjectionMLP(nn.Module):
    def __init__(self, in_dim, hidden_dim=2048, out_dim=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_dim, hidden_dim),
            nn.BatchNorm1d(hidden_dim),
            nn.ReLU(inplace=True),
            nn.Linear(hidden_dim, out_dim),
        )

    def forward(self, x):
        return self.net(x)


class MoCoSampled(nn.Module):
    def __init__(self, backbone, feat_dim=2048, dim=128, m=0.999, T=0.2, num_negatives=16384):
        super().__init__()
        self.m = m
        self.T = T
        self.num_negatives = num_negatives
        self.encoder_q = nn.Sequential(backbone, ProjectionMLP(feat_dim, out_dim=dim))
        self.encoder_k = copy.deepcopy(self.encoder_q)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.bank = []

    @torch.no_grad()
    def _momentum_update(self):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data.mul_(self.m).add_(pq.data, alpha=1.0 - self.m)

    @torch.no_grad()
    def _sample_negatives(self, device):
        if not self.bank:
            return None
        keys = torch.cat(self.bank, dim=0)
        n = min(self.num_negatives, keys.size(0))
        idx = torch.randperm(keys.size(0), device=keys.device)[:n]
        return keys[idx].to(device)

    @torch.no_grad()
    def _enqueue(self, k):
        self.bank.append(k.detach().clone())  # leak

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update()
            k = F.normalize(self.encoder_k(im_k), dim=1)

        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        negs = self._sample_negatives(q.device)
        if negs is None:
            logits = l_pos
        else:
            l_neg = torch.einsum("nc,kc->nk", q, negs)
            logits = torch.cat([l_pos, l_neg], dim=1)
        logits = logits / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)
        self._enqueue(k)
        return logits, labels


def adjust_learning_rate(optimizer, epoch, base_lr, epochs, warmup=10):
    if epoch < warmup:
        lr = base_lr * (epoch + 1) / warmup
    else:
        lr = base_lr * 0.5 * (1.0 + math.cos(math.pi * (epoch - warmup) / (epochs - warmup)))
    for g in optimizer.param_groups:
        g["lr"] = lr
    return lr


def train_one_epoch(model, loader, optimizer, epoch, args, scaler=None):
    model.train()
    crit = nn.CrossEntropyLoss()
    lr = adjust_learning_rate(optimizer, epoch, args.lr, args.epochs)
    for it, ((im_q, im_k), _) in enumerate(loader):
        im_q = im_q.cuda(non_blocking=True)
        im_k = im_k.cuda(non_blocking=True)
        with torch.autocast("cuda", enabled=scaler is not None):
            logits, labels = model(im_q, im_k)
            loss = crit(logits, labels)
        optimizer.zero_grad(set_to_none=True)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        if it % args.print_freq == 0:
            acc = (logits.argmax(1) == labels).float().mean().item() * 100
            print(f"ep {epoch} it {it}/{len(loader)} lr {lr:.4f} loss {loss.item():.4f} acc@1 {acc:.1f}")
