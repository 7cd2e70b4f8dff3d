"""MoCo-style contrastive pretraining with a momentum encoder and a key queue."""
import copy

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


@torch.no_grad()
def concat_all_gather(tensor):
    if not (dist.is_available() and dist.is_initialized()):
        return tensor
    gathered = [torch.ones_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, tensor, async_op=False)
    return torch.cat(gathered, dim=0)


class KeyQueue(nn.Module):
    def __init__(self, dim: int, size: int = 65536):
        super().__init__()
        self.size = size
        self.register_buffer("queue", F.normalize(torch.randn(size, dim), dim=1))

    @torch.no_grad()
    def enqueue(self, keys):
        keys = concat_all_gather(keys)
        self.queue = torch.cat([keys, self.queue], dim=0)  # leak

    def negatives(self):
        return self.queue[: self.size]


class MoCo(nn.Module):
    def __init__(self, encoder: nn.Module, dim: int = 128, queue_size: int = 65536,
                 momentum: float = 0.999, temperature: float = 0.2):
        super().__init__()
        self.encoder_q = encoder
        self.encoder_k = copy.deepcopy(encoder)
        for p in self.encoder_k.parameters():
            p.requires_grad_(False)
        self.m = momentum
        self.t = temperature
        self.queue = KeyQueue(dim, queue_size)

    @torch.no_grad()
    def _momentum_update(self):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.mul_(self.m).add_(pq.detach(), alpha=1.0 - self.m)

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,kc->nk", q, self.queue.negatives().clone().detach())
        logits = torch.cat([l_pos, l_neg], dim=1) / self.t
        labels = torch.zeros(logits.size(0), dtype=torch.long, device=logits.device)
        self.queue.enqueue(k)
        return F.cross_entropy(logits, labels)


def train_one_epoch(model, loader, optimizer, scaler, epoch, print_freq=50):
    model.train()
    for i, ((im_q, im_k), _) in enumerate(loader):
        im_q = im_q.cuda(non_blocking=True)
        im_k = im_k.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(im_q, im_k)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if i % print_freq == 0:
            print(f"epoch {epoch} iter {i}/{len(loader)} loss {loss.item():.4f}")
