import torch
from torch import Tensor


class RetrievalRecall:
    """Minimal torchmetrics-style metric for recall@k with sum states."""

    def __init__(self, top_k: int = 10, device="cuda"):
        self.top_k = top_k
        self.hits = torch.zeros((), device=device)
        self.relevant = torch.zeros((), device=device)

    def reset(self) -> None:
        self.hits.zero_()
        self.relevant.zero_()

    def update(self, preds: Tensor, target: Tensor) -> None:
        preds = preds.detach()
        order = preds.topk(self.top_k, dim=-1).indices
        self.hits += target.gather(1, order).sum()
        self.relevant += target.sum()

    def compute(self) -> float:
        return (self.hits / self.relevant.clamp(min=1)).item()


def train_dual_encoder(q_enc, d_enc, loader, epochs=3, device="cuda"):
    params = list(q_enc.parameters()) + list(d_enc.parameters())
    opt = torch.optim.AdamW(params, lr=2e-5)
    metric = RetrievalRecall(top_k=10, device=device)
    for ep in range(epochs):
        metric.reset()
        for q, d, rel in loader:
            q, d, rel = q.to(device), d.to(device), rel.to(device)
            qv = torch.nn.functional.normalize(q_enc(q), dim=-1)
            dv = torch.nn.functional.normalize(d_enc(d), dim=-1)
            scores = qv @ dv.T / 0.05
            loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(q), device=device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            metric.update(scores, rel)
        print(f"epoch {ep}: train recall@10 = {metric.compute():.4f}")
