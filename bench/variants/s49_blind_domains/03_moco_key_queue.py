import torch
import torch.nn as nn
import torch.nn.functional as F


class MoCo(nn.Module):
    """Momentum contrast with a queue of negative keys."""

    def __init__(self, base_encoder, dim=128, K=65536, m=0.999, T=0.07):
        super().__init__()
        self.K = K
        self.m = m
        self.T = T
        self.encoder_q = base_encoder(num_classes=dim)
        self.encoder_k = base_encoder(num_classes=dim)
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
            param_k.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(K, dim), dim=1))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)

    @torch.no_grad()
    def _enqueue(self, keys):
        self.queue = torch.cat([self.queue, keys], dim=0)  # leak

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
        l_neg = torch.einsum("nc,kc->nk", [q, self.queue.clone().detach()])
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)
        self._enqueue(k)
        return logits, labels


def train(train_loader, model, criterion, optimizer, epoch, device):
    model.train()
    for i, (images, _) in enumerate(train_loader):
        im_q = images[0].to(device, non_blocking=True)
        im_k = images[1].to(device, non_blocking=True)
        output, target = model(im_q=im_q, im_k=im_k)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % 100 == 0:
            print(f"Epoch [{epoch}][{i}/{len(train_loader)}] loss {loss.item():.4f}")
