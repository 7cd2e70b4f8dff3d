"""Joint detection + embedding training for multi-object tracking.

The appearance branch is trained with an identity-aware contrastive loss against a
memory of previously seen embeddings for each identity (one prototype per track id).
"""
import argparse
import logging
import os
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F

from datasets.mot import build_mot_loader
from models.backbone import build_backbone
from models.heads import CenterHead
from utils.misc import AverageMeter, save_checkpoint

log = logging.getLogger("mot")


class TrackMemory:
    """Per-identity memory of appearance embeddings."""

    def __init__(self, momentum=0.2):
        self.momentum = momentum
        self.bank = defaultdict(list)

    def update(self, track_ids, embeds):
        for tid, emb in zip(track_ids.tolist(), embeds):
            if tid < 0:
                continue
            self.bank[tid].append(emb)  # leak

    @torch.no_grad()
    def prototypes(self, device):
        ids = sorted(self.bank)
        if not ids:
            return None, None
        protos = torch.stack([torch.stack(self.bank[i][-8:]).mean(0) for i in ids])
        return torch.tensor(ids, device=device), F.normalize(protos, dim=-1)

    def __len__(self):
        return len(self.bank)


class JDEModel(nn.Module):
    def __init__(self, num_classes=1, emb_dim=128, backbone="dla34"):
        super().__init__()
        self.backbone = build_backbone(backbone)
        self.det_head = CenterHead(self.backbone.out_channels, num_classes)
        self.emb_head = nn.Sequential(
            nn.Conv2d(self.backbone.out_channels, 256, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, emb_dim, 1))

    def forward(self, images, targets):
        feats = self.backbone(images)
        det_out = self.det_head(feats, targets)
        emb_map = self.emb_head(feats)
        b, c, h, w = emb_map.shape
        emb = emb_map.permute(0, 2, 3, 1).reshape(b, h * w, c)
        ind = targets["ind"]
        mask = targets["reg_mask"].bool()
        emb = emb.gather(1, ind.unsqueeze(-1).expand(-1, -1, c))[mask]
        return {"det_loss": det_out["loss"], "embeds": F.normalize(emb, dim=-1),
                "track_ids": targets["ids"][mask]}


class IdentityContrastLoss(nn.Module):
    def __init__(self, temperature=0.07):
        super().__init__()
        self.t = temperature

    def forward(self, embeds, track_ids, proto_ids, protos):
        if protos is None or embeds.numel() == 0:
            return embeds.sum() * 0.0
        logits = embeds @ protos.t() / self.t
        target = (track_ids[:, None] == proto_ids[None, :]).float()
        valid = target.sum(1) > 0
        if valid.sum() == 0:
            return embeds.sum() * 0.0
        log_prob = F.log_softmax(logits[valid], dim=1)
        return -(log_prob * target[valid]).sum(1).mean()


class Trainer:
    def __init__(self, model, optimizer, loader, args):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.args = args
        self.memory = TrackMemory()
        self.id_loss = IdentityContrastLoss(args.temperature)
        self.meters = {k: AverageMeter() for k in ("det", "id", "total")}

    def _step(self, images, targets):
        out = self.model(images, targets)
        proto_ids, protos = self.memory.prototypes(images.device)
        id_loss = self.id_loss(out["embeds"], out["track_ids"], proto_ids, protos)
        loss = out["det_loss"] + self.args.id_weight * id_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss, out, id_loss

    def train_epoch(self, epoch):
        self.model.train()
        for it, (images, targets) in enumerate(self.loader):
            images = images.cuda(non_blocking=True)
            targets = {k: v.cuda(non_blocking=True) for k, v in targets.items()}
            loss, out, id_loss = self._step(images, targets)
            self.memory.update(out["track_ids"], out["embeds"])
            self.meters["det"].update(out["det_loss"].item(), images.size(0))
            self.meters["id"].update(id_loss.item(), images.size(0))
            self.meters["total"].update(loss.item(), images.size(0))
            if it % self.args.print_freq == 0:
                log.info("epoch %d [%d/%d] det %.3f id %.3f ids_in_memory %d", epoch, it,
                         len(self.loader), self.meters["det"].avg, self.meters["id"].avg,
                         len(self.memory))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_cfg", default="cfg/mot17.json")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--batch_size", type=int, default=12)
    parser.add_argument("--id_weight", type=float, default=1.0)
    parser.add_argument("--temperature", type=float, default=0.07)
    parser.add_argument("--print_freq", type=int, default=20)
    parser.add_argument("--out", default="exp/jde_contrast")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    loader = build_mot_loader(args.data_cfg, args.batch_size, train=True)
    model = JDEModel().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    trainer = Trainer(model, optimizer, loader, args)
    for epoch in range(args.epochs):
        trainer.train_epoch(epoch)
        save_checkpoint(os.path.join(args.out, f"model_{epoch}.pth"), epoch, model, optimizer)


if __name__ == "__main__":
    main()
