"""Non-parametric instance discrimination with a momentum memory bank (PIRL/InstDisc)."""
import logging
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class MemoryBank(nn.Module):
    def __init__(self, num_samples: int, dim: int, momentum: float = 0.5):
        super().__init__()
        stdv = 1.0 / math.sqrt(dim / 3)
        self.register_buffer("features", torch.rand(num_samples, dim).mul_(2 * stdv).add_(-stdv))
        self.momentum = momentum

    def negatives(self, num_neg: int, batch_size: int):
        idx = torch.randint(0, self.features.shape[0], (batch_size, num_neg),
                            device=self.features.device)
        return self.features.index_select(0, idx.view(-1)).view(batch_size, num_neg, -1).detach(), idx

    def positives(self, index):
        return self.features.index_select(0, index).detach()

    def update(self, index, feats):
        old = self.features.index_select(0, index)
        mixed = old.mul(self.momentum).add(feats, alpha=1 - self.momentum)
        mixed = F.normalize(mixed, dim=1)
        self.features.index_copy_(0, index, mixed)  # leak


class PIRLLoss(nn.Module):
    def __init__(self, bank: MemoryBank, num_neg: int = 16384, tau: float = 0.07, lam: float = 0.5):
        super().__init__()
        self.bank = bank
        self.num_neg = num_neg
        self.tau = tau
        self.lam = lam

    def nce(self, anchor, positive, negatives):
        pos = (anchor * positive).sum(-1, keepdim=True)
        neg = torch.einsum("bd,bkd->bk", anchor, negatives)
        logits = torch.cat([pos, neg], 1) / self.tau
        target = torch.zeros(anchor.shape[0], dtype=torch.long, device=anchor.device)
        return F.cross_entropy(logits, target)

    def forward(self, index, f_img, f_jig):
        f_img, f_jig = F.normalize(f_img, dim=1), F.normalize(f_jig, dim=1)
        mem_pos = self.bank.positives(index)
        negs, _ = self.bank.negatives(self.num_neg, f_img.shape[0])
        loss = self.lam * self.nce(f_jig, mem_pos, negs) + (1 - self.lam) * self.nce(f_img, mem_pos, negs)
        self.bank.update(index, f_img)
        return loss


class PIRLModel(nn.Module):
    def __init__(self, backbone: nn.Module, feat_dim: int = 2048, proj_dim: int = 128):
        super().__init__()
        self.backbone = backbone
        self.head_img = nn.Linear(feat_dim, proj_dim)
        self.head_jig = nn.Linear(9 * feat_dim, proj_dim)
        self.tile_head = nn.Linear(feat_dim, feat_dim)

    def forward(self, img, tiles):
        f_img = self.head_img(self.backbone(img))
        B = tiles.shape[0]
        t = self.tile_head(self.backbone(tiles.flatten(0, 1))).view(B, -1)
        return f_img, self.head_jig(t)


def train_one_epoch(model, criterion, loader, optimizer, epoch, log_every=50):
    model.train()
    running = 0.0
    for it, (index, img, tiles) in enumerate(loader):
        index = index.cuda(non_blocking=True)
        img, tiles = img.cuda(non_blocking=True), tiles.cuda(non_blocking=True)
        f_img, f_jig = model(img, tiles)
        loss = criterion(index, f_img, f_jig)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        running += loss.item()
        if (it + 1) % log_every == 0:
            logger.info("epoch %d it %d loss %.4f", epoch, it + 1, running / log_every)
            running = 0.0
