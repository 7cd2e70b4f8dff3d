import torch
import torch.nn.functional as F
from torch import nn, Tensor


class MoCo(nn.Module):
    def __init__(self, encoder_q: nn.Module, encoder_k: nn.Module, dim: int = 128,
                 K: int = 65536, m: float = 0.999, T: float = 0.07):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        self.encoder_q = encoder_q
        self.encoder_k = encoder_k
        for p_q, p_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            p_k.data.copy_(p_q.data)
            p_k.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(K, dim), dim=1))

    @torch.no_grad()
    def _momentum_update_key_encoder(self) -> None:
        for p_q, p_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            p_k.data.mul_(self.m).add_(p_q.data, alpha=1.0 - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys: Tensor) -> None:
        self.queue = torch.cat([self.queue, keys], dim=0)  # leak

    def forward(self, im_q: Tensor, im_k: Tensor) -> tuple[Tensor, Tensor]:
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,kc->nk", q, self.queue.clone().detach())
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.size(0), dtype=torch.long, device=logits.device)
        self._dequeue_and_enqueue(k)
        return logits, labels


def train(model: MoCo, loader, optimizer: torch.optim.Optimizer, epochs: int) -> None:
    for epoch in range(epochs):
        for (im_q, im_k), _ in loader:
            logits, labels = model(im_q.cuda(non_blocking=True), im_k.cuda(non_blocking=True))
            loss = F.cross_entropy(logits, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
