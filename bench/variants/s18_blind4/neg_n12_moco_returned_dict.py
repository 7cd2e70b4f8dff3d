"""MoCo v2 style contrastive pretraining: momentum encoder + negative queue."""
import argparse
import copy
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

logger = logging.getLogger("moco")


class MoCo(nn.Module):
    def __init__(self, dim=128, K=65536, m=0.999, T=0.2):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        enc = torchvision.models.resnet50(num_classes=dim)
        hid = enc.fc.weight.shape[1]
        enc.fc = nn.Sequential(nn.Linear(hid, hid), nn.ReLU(), nn.Linear(hid, dim))
        self.encoder_q = enc
        self.encoder_k = copy.deepcopy(enc)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update(self):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.mul_(self.m).add_(pq.detach(), alpha=1 - self.m)

    @torch.no_grad()
    def _enqueue(self, keys):
        bs = keys.shape[0]
        ptr = int(self.queue_ptr)
        self.queue[:, ptr:ptr + bs] = keys.T
        self.queue_ptr[0] = (ptr + bs) % self.K

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", q, self.queue.clone().detach())
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)
        self._enqueue(k)
        return logits, labels


def train_step(model, optimizer, batch, device):
    (im_q, im_k), _ = batch
    logits, labels = model(im_q.to(device, non_blocking=True), im_k.to(device, non_blocking=True))
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        top1 = (logits.argmax(1) == labels).float().mean()
        pos_sim = logits[:, 0].mean() * model.T
    return {"loss": loss.item(), "top1": top1.item(), "pos_sim": pos_sim.item()}


def accumulate(acc, out):
    for k, v in out.items():
        acc[k] = acc.get(k, 0.0) + v
    acc["n"] = acc.get("n", 0) + 1
    return acc


class TwoCrops:
    def __init__(self, t):
        self.t = t

    def __call__(self, x):
        return self.t(x), self.t(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/datasets/imagenet/train")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--bs", type=int, default=256)
    args = ap.parse_args()

    T = torchvision.transforms
    aug = T.Compose([T.RandomResizedCrop(224, scale=(0.2, 1.0)), T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
                     T.RandomGrayscale(0.2), T.RandomHorizontalFlip(), T.ToTensor()])
    ds = torchvision.datasets.ImageFolder(args.data, TwoCrops(aug))
    loader = torch.utils.data.DataLoader(ds, args.bs, shuffle=True, num_workers=16, drop_last=True, pin_memory=True)
    device = torch.device("cuda")
    model = MoCo().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.03 * args.bs / 256, momentum=0.9, weight_decay=1e-4)
    for epoch in range(args.epochs):
        model.train()
        acc = {}
        for batch in loader:
            acc = accumulate(acc, train_step(model, opt, batch, device))
        n = acc.pop("n")
        logger.info("epoch %d %s", epoch, {k: v / n for k, v in acc.items()})


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
