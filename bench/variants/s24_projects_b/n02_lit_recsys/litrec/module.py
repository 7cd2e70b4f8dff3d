"""Neural matrix factorisation trained with BPR loss."""
from __future__ import annotations

import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F

from litrec import HitRateAtK, RunningMean


class NeuMF(nn.Module):
    def __init__(self, n_users: int, n_items: int, dim: int = 64, mlp=(128, 64)):
        super().__init__()
        self.gmf_u = nn.Embedding(n_users, dim)
        self.gmf_i = nn.Embedding(n_items, dim)
        self.mlp_u = nn.Embedding(n_users, dim)
        self.mlp_i = nn.Embedding(n_items, dim)
        layers, c = [], 2 * dim
        for h in mlp:
            layers += [nn.Linear(c, h), nn.ReLU(), nn.Dropout(0.1)]
            c = h
        self.mlp = nn.Sequential(*layers)
        self.out = nn.Linear(dim + c, 1)
        for emb in (self.gmf_u, self.gmf_i, self.mlp_u, self.mlp_i):
            nn.init.normal_(emb.weight, std=0.01)

    def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        gmf = self.gmf_u(users) * self.gmf_i(items)
        mlp = self.mlp(torch.cat([self.mlp_u(users), self.mlp_i(items)], dim=-1))
        return self.out(torch.cat([gmf, mlp], dim=-1)).squeeze(-1)


class BPRModule(pl.LightningModule):
    def __init__(self, n_users: int, n_items: int, dim: int = 64, lr: float = 1e-3,
                 l2: float = 1e-6, k: int = 10):
        super().__init__()
        self.save_hyperparameters()
        self.model = NeuMF(n_users, n_items, dim)
        self.train_loss = RunningMean("bpr")
        self.val_rank = HitRateAtK(k)

    def training_step(self, batch, batch_idx):
        users, pos, neg = batch
        pos_s = self.model(users, pos)
        neg_s = self.model(users, neg)
        loss = -F.logsigmoid(pos_s - neg_s).mean()
        reg = self.hparams.l2 * (pos_s.pow(2).mean() + neg_s.pow(2).mean())
        loss = loss + reg
        self.train_loss.update(loss, n=users.size(0))
        self.log("train/bpr", loss, prog_bar=True)
        return loss

    def on_train_epoch_end(self):
        self.log("train/bpr_epoch", self.train_loss.compute())
        self.train_loss.reset()

    def validation_step(self, batch, batch_idx):
        users, pos, negs = batch                         # negs: (B, num_neg)
        pos_s = self.model(users, pos)
        b, m = negs.shape
        neg_s = self.model(users.unsqueeze(1).expand(b, m).reshape(-1),
                           negs.reshape(-1)).view(b, m)
        self.val_rank.update(pos_s, neg_s)

    def on_validation_epoch_end(self):
        for name, value in self.val_rank.compute().items():
            self.log(f"val/{name}", value, prog_bar=name.startswith("hr"))
        self.val_rank.reset()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
