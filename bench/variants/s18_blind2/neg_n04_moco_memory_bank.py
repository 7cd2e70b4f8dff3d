"""Momentum-contrast pretraining as a LightningModule.

Negatives are drawn from a memory bank of momentum-encoder keys.
"""
import copy
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class KeyBank(nn.Module):
    """Fixed-size FIFO ring buffer of momentum-encoder keys (MoCo-style queue)."""

    def __init__(self, max_negatives: int = 65536, dim: int = 128):
        super().__init__()
        self.max_negatives = max_negatives
        self.register_buffer("queue", F.normalize(torch.randn(max_negatives, dim), dim=1))
        self.register_buffer("ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def enqueue(self, keys: torch.Tensor) -> None:
        n = keys.size(0)
        p = int(self.ptr)
        idx = torch.arange(p, p + n, device=keys.device) % self.max_negatives
        self.queue[idx] = keys.detach()
        self.ptr[0] = (p + n) % self.max_negatives

    def negatives(self) -> torch.Tensor:
        return self.queue.clone().detach()


def build_encoder(dim=128):
    backbone = torchvision.models.resnet18(num_classes=dim)
    in_f = backbone.fc.weight.shape[1]
    backbone.fc = nn.Sequential(nn.Linear(in_f, in_f), nn.ReLU(), nn.Linear(in_f, dim))
    return backbone


class MoCoModule(pl.LightningModule):
    def __init__(self, dim=128, K=65536, m=0.999, T=0.07, lr=0.03):
        super().__init__()
        self.save_hyperparameters()
        self.encoder_q = build_encoder(dim)
        self.encoder_k = copy.deepcopy(self.encoder_q)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.bank = KeyBank(K, dim)

    @torch.no_grad()
    def _momentum_update(self):
        m = self.hparams.m
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data.mul_(m).add_(pq.data, alpha=1 - m)

    def _keys(self, im_k):
        with torch.no_grad():
            self._momentum_update()
            return F.normalize(self.encoder_k(im_k), dim=1)

    def contrastive_logits(self, q, k):
        l_pos = (q * k).sum(dim=1, keepdim=True)
        neg = self.bank.negatives()
        l_neg = q @ neg.t()
        logits = torch.cat([l_pos, l_neg], dim=1)
        return logits / self.hparams.T

    def training_step(self, batch, batch_idx):
        (im_q, im_k), _ = batch
        q = F.normalize(self.encoder_q(im_q), dim=1)
        k = self._keys(im_k)
        logits = self.contrastive_logits(q, k)
        labels = torch.zeros(logits.size(0), dtype=torch.long, device=self.device)
        loss = F.cross_entropy(logits, labels)
        self.bank.enqueue(k)
        self.log("train/loss", loss, prog_bar=True)
        self.log("train/n_neg", float(logits.size(1) - 1))
        return loss

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.encoder_q.parameters(), lr=self.hparams.lr, momentum=0.9, weight_decay=1e-4)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.trainer.max_epochs)
        return [opt], [sched]


class TwoCrops:
    def __init__(self, tf):
        self.tf = tf

    def __call__(self, x):
        return self.tf(x), self.tf(x)


def make_loader(root, bs=256):
    T = torchvision.transforms
    aug = T.Compose([
        T.RandomResizedCrop(32, scale=(0.2, 1.0)),
        T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
        T.RandomGrayscale(0.2),
        T.RandomHorizontalFlip(),
        T.ToTensor(),
    ])
    ds = torchvision.datasets.CIFAR10(root, train=True, download=True, transform=TwoCrops(aug))
    return torch.utils.data.DataLoader(ds, batch_size=bs, shuffle=True, num_workers=8, drop_last=True, pin_memory=True)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="./data")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--K", type=int, default=16384)
    args = ap.parse_args()
    model = MoCoModule(K=args.K)
    trainer = pl.Trainer(max_epochs=args.epochs, accelerator="auto", devices=1, log_every_n_steps=50)
    trainer.fit(model, make_loader(args.root))
