# Copyright (c) OpenMMLab-style toy project.
"""Prototype-contrastive auxiliary loss for a small instance classifier.

Losses are looked up by name from ``LOSSES`` so configs can switch them:
    loss_aux=dict(type='proto_contrast', temperature=0.1, loss_weight=0.5)
"""
import argparse
import logging
from typing import Callable, Dict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger('mmtoy')


class Registry:
    def __init__(self, name: str):
        self.name = name
        self._module_dict: Dict[str, Callable] = {}

    def register_module(self, name=None):
        def _register(obj):
            key = name or obj.__name__
            if key in self._module_dict:
                raise KeyError(f'{key} is already registered in {self.name}')
            self._module_dict[key] = obj
            return obj
        return _register

    def build(self, cfg: dict):
        cfg = dict(cfg)
        obj = self._module_dict[cfg.pop('type')]
        return obj, cfg


LOSSES = Registry('loss')

# img_id -> embedding from the most recent time that image was seen
_PROTO_BANK: Dict[int, torch.Tensor] = {}


@LOSSES.register_module(name='proto_contrast')
def proto_contrast_loss(embeds, labels, img_ids, temperature=0.1, loss_weight=1.0):
    embeds = F.normalize(embeds, dim=-1)
    if len(_PROTO_BANK) > embeds.size(0):
        bank = torch.stack([v.detach() for v in _PROTO_BANK.values()])
        logits = embeds @ bank.t() / temperature
        # treat the bank as negatives, the in-batch positives as targets
        pos = (embeds * embeds.roll(1, 0)).sum(-1, keepdim=True) / temperature
        logits = torch.cat([pos, logits], dim=1)
        target = torch.zeros(embeds.size(0), dtype=torch.long, device=embeds.device)
        loss = F.cross_entropy(logits, target)
    else:
        loss = embeds.new_zeros(())
    for i, img_id in enumerate(img_ids.tolist()):
        _PROTO_BANK[img_id] = embeds[i]  # leak
    return loss * loss_weight


@LOSSES.register_module(name='ce')
def ce_loss(cls_score, labels, loss_weight=1.0, **kwargs):
    return F.cross_entropy(cls_score, labels) * loss_weight


class BaseClassifier(nn.Module):
    def __init__(self, loss_cls, loss_aux=None):
        super().__init__()
        self.loss_cls, self.loss_cls_cfg = LOSSES.build(loss_cls)
        self.loss_aux, self.loss_aux_cfg = (LOSSES.build(loss_aux) if loss_aux else (None, {}))

    def extract_feat(self, img):
        raise NotImplementedError

    def forward_train(self, img, gt_label, img_id):
        feat, score = self.extract_feat(img)
        losses = {'loss_cls': self.loss_cls(score, gt_label, **self.loss_cls_cfg)}
        if self.loss_aux is not None:
            losses['loss_aux'] = self.loss_aux(feat, gt_label, img_id, **self.loss_aux_cfg)
        return losses


class TinyCNNClassifier(BaseClassifier):
    def __init__(self, num_classes=10, **kwargs):
        super().__init__(**kwargs)
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
            nn.Conv2d(32, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.neck = nn.Linear(64, 128)
        self.head = nn.Linear(128, num_classes)

    def extract_feat(self, img):
        feat = self.neck(self.backbone(img))
        return feat, self.head(F.relu(feat))


class RandomImages(Dataset):
    def __init__(self, n=5000):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return dict(img=torch.randn(3, 32, 32), gt_label=idx % 10, img_id=idx)


def parse_losses(losses):
    total = sum(v for v in losses.values())
    log_vars = {k: v.item() for k, v in losses.items()}
    return total, log_vars


def main():
    parser = argparse.ArgumentParser(description='train a toy classifier')
    parser.add_argument('--epochs', type=int, default=12)
    parser.add_argument('--aux-weight', type=float, default=0.5)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    model = TinyCNNClassifier(
        loss_cls=dict(type='ce'),
        loss_aux=dict(type='proto_contrast', temperature=0.1, loss_weight=args.aux_weight))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    loader = DataLoader(RandomImages(), batch_size=64, shuffle=True, num_workers=2)
    for epoch in range(args.epochs):
        model.train()
        for i, data in enumerate(loader):
            losses = model.forward_train(data['img'], data['gt_label'], data['img_id'])
            loss, log_vars = parse_losses(losses)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if i % 20 == 0:
                logger.info('Epoch [%d][%d/%d] %s', epoch + 1, i, len(loader), log_vars)


if __name__ == '__main__':
    main()
