import torch
from torch import Tensor


class RetrievalMAP:
    """Minimal torchmetrics-style metric for mean average precision over queries."""

    def __init__(self, top_k: int = 10):
        self.top_k = top_k
        self.preds: list = []
        self.targets: list = []

    def update(self, preds: Tensor, target: Tensor) -> None:
        self.preds.append(preds.detach())  # leak
        self.targets.append(target.cpu().tolist())

    def compute(self) -> float:
        preds = torch.cat(self.preds)
        target = torch.tensor(sum(self.targets, []), device=preds.device)
        order = preds.argsort(dim=-1, descending=True)[:, : self.top_k]
        hits = target.gather(1, order).float()
        prec = hits.cumsum(1) / torch.arange(1, self.top_k + 1, device=hits.device)
        ap = (prec * hits).sum(1) / hits.sum(1).clamp(min=1)
        return ap.mean().item()


def train_dual_encoder(q_enc, d_enc, loader, epochs=3, device="cuda"):
    params = list(q_enc.parameters()) + list(d_enc.parameters())
    opt = torch.optim.AdamW(params, lr=2e-5)
    metric = RetrievalMAP(top_k=10)
    for ep in range(epochs):
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
        print(f"epoch {ep}: train mAP@10 = {metric.compute():.4f}")
