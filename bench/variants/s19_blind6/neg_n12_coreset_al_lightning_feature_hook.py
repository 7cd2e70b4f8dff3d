"""Core-set active learning (Sener & Savarese, 2018) with PyTorch Lightning.

Penultimate-layer features are captured through a forward hook and used for the
k-center greedy selection at the end of every AL cycle.
"""
import argparse
from contextlib import contextmanager
from typing import Dict, List

import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Subset


class FeatureRecorder:
    def __init__(self):
        self.store: Dict[str, List] = {}
        self.enabled = False

    @contextmanager
    def capture(self):
        self.store.clear()
        self.enabled = True
        try:
            yield self
        finally:
            self.enabled = False

    def hook(self, name):
        def _fn(module, inputs, output):
            if self.enabled:
                self.add(name, output.detach().flatten(1))
        return _fn

    def add(self, name, feats):
        self.store.setdefault(name, []).append(feats)

    def collect(self, name):
        return torch.cat(self.store.get(name, []), dim=0)

    def reset(self):
        self.store.clear()


class ALClassifier(pl.LightningModule):
    def __init__(self, num_classes=10, lr=0.1, epochs=200):
        super().__init__()
        self.save_hyperparameters()
        net = torchvision.models.resnet18(num_classes=num_classes)
        net.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        net.maxpool = nn.Identity()
        self.net = net
        self.recorder = FeatureRecorder()
        self.net.avgpool.register_forward_hook(self.recorder.hook("penultimate"))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        acc = (self(x).argmax(1) == y).float().mean()
        self.log("val/acc", acc, prog_bar=True)

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9, weight_decay=5e-4)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, self.hparams.epochs)
        return [opt], [sched]

    @torch.no_grad()
    def embed(self, loader):
        self.eval()
        with self.recorder.capture():
            for x, _ in loader:
                self(x.to(self.device))
            feats = self.recorder.collect("penultimate").cpu()
        self.recorder.reset()
        return feats


def k_center_greedy(labeled_feats, pool_feats, budget):
    min_dist = torch.cdist(pool_feats, labeled_feats).min(dim=1).values
    chosen = []
    for _ in range(budget):
        idx = int(min_dist.argmax())
        chosen.append(idx)
        d = torch.cdist(pool_feats, pool_feats[idx:idx + 1]).squeeze(1)
        min_dist = torch.minimum(min_dist, d)
    return chosen


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--init", type=int, default=5000)
    p.add_argument("--budget", type=int, default=2500)
    p.add_argument("--cycles", type=int, default=6)
    p.add_argument("--epochs", type=int, default=200)
    args = p.parse_args()
    pl.seed_everything(0)

    tf_train = torchvision.transforms.Compose([
        torchvision.transforms.RandomCrop(32, padding=4), torchvision.transforms.RandomHorizontalFlip(),
        torchvision.transforms.ToTensor()])
    tf_test = torchvision.transforms.ToTensor()
    train_aug = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=tf_train)
    train_plain = torchvision.datasets.CIFAR10("data", train=True, transform=tf_test)
    test_set = torchvision.datasets.CIFAR10("data", train=False, transform=tf_test)

    labeled = list(np.random.permutation(len(train_aug))[:args.init])
    for cycle in range(args.cycles):
        model = ALClassifier(epochs=args.epochs)
        trainer = pl.Trainer(max_epochs=args.epochs, accelerator="gpu", devices=1, logger=False,
                             enable_checkpointing=False)
        trainer.fit(model, DataLoader(Subset(train_aug, labeled), batch_size=128, shuffle=True, num_workers=4),
                    DataLoader(test_set, batch_size=512, num_workers=4))
        unlabeled = np.setdiff1d(np.arange(len(train_plain)), labeled)
        model.cuda()
        lab_f = model.embed(DataLoader(Subset(train_plain, labeled), batch_size=512))
        pool_f = model.embed(DataLoader(Subset(train_plain, unlabeled), batch_size=512))
        picked = k_center_greedy(lab_f, pool_f, args.budget)
        labeled += unlabeled[picked].tolist()
        print(f"cycle {cycle}: labeled={len(labeled)}")


if __name__ == "__main__":
    main()
