"""LightningModule implementing MoCo v2 (He et al. / Chen et al., 2020)."""
import copy

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


def projection_mlp(in_dim: int, out_dim: int) -> nn.Module:
    return nn.Sequential(nn.Linear(in_dim, in_dim), nn.ReLU(inplace=True), nn.Linear(in_dim, out_dim))


class MoCo(pl.LightningModule):
    def __init__(self, dim: int = 128, queue_size: int = 65536, momentum: float = 0.999,
                 temperature: float = 0.2, lr: float = 0.03, weight_decay: float = 1e-4,
                 max_epochs: int = 200):
        super().__init__()
        self.save_hyperparameters()
        backbone = torchvision.models.resnet50(weights=None)
        feat_dim = backbone.fc.in_features
        backbone.fc = projection_mlp(feat_dim, dim)
        self.encoder_q = backbone
        self.encoder_k = copy.deepcopy(backbone)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, queue_size), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update(self) -> None:
        m = self.hparams.momentum
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data.mul_(m).add_(pq.data, alpha=1.0 - m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys: torch.Tensor) -> None:
        bsz = keys.shape[0]
        ptr = int(self.queue_ptr)
        assert self.hparams.queue_size % bsz == 0
        self.queue[:, ptr:ptr + bsz] = keys.T
        self.queue_ptr[0] = (ptr + bsz) % self.hparams.queue_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.encoder_q(x), dim=1)

    def training_step(self, batch, batch_idx):
        (im_q, im_k), _ = batch
        q = self(im_q)
        with torch.no_grad():
            self._momentum_update()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", q, self.queue.clone().detach())
        logits = torch.cat([l_pos, l_neg], dim=1) / self.hparams.temperature
        labels = torch.zeros(logits.shape[0], dtype=torch.long, device=self.device)
        loss = F.cross_entropy(logits, labels)
        acc = (logits.argmax(1) == 0).float().mean()
        self._dequeue_and_enqueue(k)
        self.log_dict({"train/loss": loss, "train/acc1": acc}, prog_bar=True)
        return {"loss": loss, "acc1": acc.detach()}

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.encoder_q.parameters(), lr=self.hparams.lr, momentum=0.9,
                              weight_decay=self.hparams.weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, self.hparams.max_epochs)
        return [opt], [sched]
