"""Supervised contrastive pretraining with a momentum key encoder and a
memory of recent keys (MoCo-style), as a LightningModule.

Keys from the last ``bank_size`` samples are used as extra positives /
negatives for the SupCon loss.
"""
import copy
import math

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class ProjectionHead(nn.Module):
    def __init__(self, in_dim, hidden_dim=2048, out_dim=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_dim, hidden_dim), nn.BatchNorm1d(hidden_dim), nn.ReLU(inplace=True),
            nn.Linear(hidden_dim, out_dim),
        )

    def forward(self, x):
        return self.net(x)


class KeyMemory:
    """Recent (key, label) pairs; oldest entries fall out of the window."""

    def __init__(self, size: int):
        self.size = size
        self._chunks = []

    def push(self, keys, labels):
        self._chunks.append((keys.detach(), labels))  # leak

    def __len__(self):
        return sum(k.size(0) for k, _ in self._chunks)

    def get(self):
        if not self._chunks:
            return None, None
        keys = torch.cat([k for k, _ in self._chunks])[-self.size:]
        labels = torch.cat([y for _, y in self._chunks])[-self.size:]
        return keys, labels


def supcon_loss(q, k_all, y_q, y_all, temperature):
    logits = q @ k_all.t() / temperature
    pos_mask = (y_q[:, None] == y_all[None, :]).float()
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    mean_log_prob_pos = (pos_mask * log_prob).sum(1) / pos_mask.sum(1).clamp(min=1)
    return -mean_log_prob_pos.mean()


class SupConMoCo(pl.LightningModule):
    def __init__(self, arch="resnet50", feat_dim=128, bank_size=65536, momentum=0.999,
                 temperature=0.1, lr=0.03, weight_decay=1e-4, max_epochs=200):
        super().__init__()
        self.save_hyperparameters()
        backbone = getattr(torchvision.models, arch)(weights=None)
        in_dim = backbone.fc.in_features
        backbone.fc = nn.Identity()
        self.encoder_q = nn.Sequential(backbone, ProjectionHead(in_dim, out_dim=feat_dim))
        self.encoder_k = copy.deepcopy(self.encoder_q)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.memory = KeyMemory(bank_size)

    @torch.no_grad()
    def _momentum_update(self):
        m = self.hparams.momentum
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.mul_(m).add_(pq.detach(), alpha=1 - m)

    def forward(self, x):
        return F.normalize(self.encoder_q(x), dim=1)

    def training_step(self, batch, batch_idx):
        (im_q, im_k), labels = batch
        q = self(im_q)
        with torch.no_grad():
            self._momentum_update()
            k = F.normalize(self.encoder_k(im_k), dim=1)

        bank_k, bank_y = self.memory.get()
        if bank_k is None:
            k_all, y_all = k, labels
        else:
            k_all, y_all = torch.cat([k, bank_k]), torch.cat([labels, bank_y])
        loss = supcon_loss(q, k_all, labels, y_all, self.hparams.temperature)

        self.memory.push(k, labels)
        self.log("train/loss", loss, prog_bar=True, on_step=True)
        self.log("train/bank_fill", float(min(len(self.memory), self.hparams.bank_size)))
        return loss

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.encoder_q.parameters(), lr=self.hparams.lr, momentum=0.9,
                              weight_decay=self.hparams.weight_decay)

        def cosine(epoch):
            return 0.5 * (1 + math.cos(math.pi * epoch / self.hparams.max_epochs))

        sched = torch.optim.lr_scheduler.LambdaLR(opt, cosine)
        return [opt], [sched]


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--bank-size", type=int, default=65536)
    args = parser.parse_args()

    from data import build_two_crop_loader  # project-local

    model = SupConMoCo(bank_size=args.bank_size, max_epochs=args.epochs)
    trainer = pl.Trainer(max_epochs=args.epochs, accelerator="gpu", devices=1, precision="16-mixed")
    trainer.fit(model, build_two_crop_loader(args.data, batch_size=256))
