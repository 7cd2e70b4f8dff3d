"""Two-tower (dual encoder) retrieval model with in-batch sampled softmax."""
from typing import Dict

import torch
import torch.nn as nn
import torch.nn.functional as F


class Tower(nn.Module):
    """Embedding bag over sparse id features followed by an MLP."""

    def __init__(self, num_ids: int, num_cats: int, dim: int = 64, hidden: int = 256, out_dim: int = 64):
        super().__init__()
        self.id_emb = nn.Embedding(num_ids, dim)
        self.cat_emb = nn.EmbeddingBag(num_cats, dim, mode="mean", padding_idx=0)
        self.mlp = nn.Sequential(
            nn.Linear(2 * dim, hidden),
            nn.ReLU(inplace=True),
            nn.Linear(hidden, out_dim),
        )

    def forward(self, ids: torch.Tensor, cats: torch.Tensor) -> torch.Tensor:
        h = torch.cat([self.id_emb(ids), self.cat_emb(cats)], dim=-1)
        return F.normalize(self.mlp(h), dim=-1)


class TwoTowerModel(nn.Module):
    def __init__(self, num_users: int, num_items: int, num_user_feats: int, num_item_feats: int,
                 dim: int = 64, temperature: float = 0.05):
        super().__init__()
        self.user_tower = Tower(num_users, num_user_feats, dim)
        self.item_tower = Tower(num_items, num_item_feats, dim)
        self.temperature = temperature

    def forward(self, batch: Dict[str, torch.Tensor], mode: str = "loss") -> Dict[str, torch.Tensor]:
        u = self.user_tower(batch["user_id"], batch["user_feats"])
        v = self.item_tower(batch["item_id"], batch["item_feats"])
        if mode == "predict":
            return {"score": (u * v).sum(-1)}
        logits = u @ v.t() / self.temperature
        # logQ correction for popularity-biased in-batch negatives
        if "item_logq" in batch:
            logits = logits - batch["item_logq"][None, :]
        labels = torch.arange(u.shape[0], device=u.device)
        loss = F.cross_entropy(logits, labels)
        return {"loss": loss, "user_emb": u, "item_emb": v, "logits": logits}


@torch.no_grad()
def recall_at_k(model: TwoTowerModel, batch: Dict[str, torch.Tensor], k: int = 10) -> float:
    out = model(batch, mode="loss")
    topk = out["logits"].topk(k, dim=-1).indices
    labels = torch.arange(topk.shape[0], device=topk.device)[:, None]
    return (topk == labels).any(dim=-1).float().mean().item()
