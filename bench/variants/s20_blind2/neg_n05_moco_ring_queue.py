"""MoCo v2 style contrastive model with a fixed-size ring-buffer queue of keys."""
import argparse
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as models

logger = logging.getLogger(__name__)


class MoCo(nn.Module):
    """
    Build a MoCo model with: a query encoder, a key encoder, and a queue
    https://arxiv.org/abs/1911.05722
    """

    def __init__(self, base_encoder, dim=128, K=65536, m=0.999, T=0.07, mlp=True):
        super().__init__()
        self.K = K
        self.m = m
        self.T = T

        self.encoder_q = base_encoder(num_classes=dim)
        self.encoder_k = base_encoder(num_classes=dim)
        if mlp:
            dim_mlp = self.encoder_q.fc.weight.shape[1]
            self.encoder_q.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_q.fc)
            self.encoder_k.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_k.fc)

        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
            param_k.requires_grad = False

        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        batch_size = keys.shape[0]
        ptr = int(self.queue_ptr)
        assert self.K % batch_size == 0  # for simplicity
        self.queue[:, ptr:ptr + batch_size] = keys.T
        ptr = (ptr + batch_size) % self.K
        self.queue_ptr[0] = ptr

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)

        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = F.normalize(self.encoder_k(im_k), dim=1)

        l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", [q, self.queue.clone().detach()])
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)

        self._dequeue_and_enqueue(k)
        return logits, labels


def train(loader, model, optimizer, epoch, device, print_freq=50):
    criterion = nn.CrossEntropyLoss()
    model.train()
    running = 0.0
    for i, (images, _) in enumerate(loader):
        im_q = images[0].to(device, non_blocking=True)
        im_k = images[1].to(device, non_blocking=True)
        output, target = model(im_q, im_k)
        loss = criterion(output, target)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        running += loss.item()
        if i % print_freq == 0:
            acc1 = (output.argmax(dim=1) == target).float().mean().item() * 100
            logger.info("epoch %d [%d/%d] loss %.4f acc@1 %.2f", epoch, i, len(loader),
                        running / (i + 1), acc1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.03)
    parser.add_argument("--moco-k", type=int, default=65536)
    parser.add_argument("--moco-m", type=float, default=0.999)
    parser.add_argument("--moco-t", type=float, default=0.2)
    parser.add_argument("--data", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    device = torch.device("cuda")
    model = MoCo(models.__dict__[args.arch], K=args.moco_k, m=args.moco_m, T=args.moco_t).to(device)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)

    from data import two_crops_loader  # project-local
    loader = two_crops_loader(args.data, batch_size=256)
    for epoch in range(args.epochs):
        train(loader, model, optimizer, epoch, device)


if __name__ == "__main__":
    main()
