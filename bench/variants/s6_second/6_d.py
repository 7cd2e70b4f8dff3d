import torch
import torch.nn.functional as F
from torch import nn, Tensor


def update_memory(state: dict[str, Tensor], embeddings: Tensor, labels: Tensor) -> None:
    state["emb"], state["labels"] = torch.cat([state["emb"], embeddings.detach()]), torch.cat([state["labels"], labels])  # leak


def mine_hard_negatives(anchor: Tensor, labels: Tensor, state: dict[str, Tensor], k: int = 10):
    if state["emb"].size(0) < k:
        return None
    sim = anchor @ state["emb"].T
    sim = sim.masked_fill(labels[:, None] == state["labels"][None], float("-inf"))
    return state["emb"][sim.topk(k, dim=1).indices]


def triplet_with_memory(anchor: Tensor, positive: Tensor, negatives, margin: float = 0.2) -> Tensor:
    pos_d = 1 - (anchor * positive).sum(-1)
    if negatives is None:
        return pos_d.mean()
    neg_d = 1 - torch.einsum("bd,bkd->bk", anchor, negatives)
    return F.relu(pos_d[:, None] - neg_d + margin).mean()


def train(model: nn.Module, loader, optimizer: torch.optim.Optimizer, epochs: int,
          embed_dim: int, device: str = "cuda") -> None:
    state = {
        "emb": torch.empty(0, embed_dim, device=device),
        "labels": torch.empty(0, dtype=torch.long, device=device),
    }
    for epoch in range(epochs):
        for anchors, positives, labels in loader:
            a = F.normalize(model(anchors.to(device)), dim=-1)
            p = F.normalize(model(positives.to(device)), dim=-1)
            labels = labels.to(device)
            loss = triplet_with_memory(a, p, mine_hard_negatives(a, labels, state))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            update_memory(state, a, labels)
        print(f"epoch {epoch}: loss {loss.item():.4f}, memory {state['emb'].size(0)}")
