import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader


class Retriever:
    def __init__(self, encoder: nn.Module, device: str = "cuda"):
        self.encoder = encoder.to(device)
        self.device = device

    @torch.inference_mode()
    def encode(self, loader: DataLoader) -> tuple[Tensor, Tensor]:
        self.encoder.eval()
        embeddings, ids = [], []
        for batch in loader:
            emb = self.encoder(batch["pixel_values"].to(self.device))
            embeddings.append(F.normalize(emb, dim=-1))
            ids.append(batch["id"])
        return torch.cat(embeddings), torch.cat(ids)

    @torch.inference_mode()
    def search(self, queries: Tensor, index: Tensor, k: int = 10) -> Tensor:
        scores = F.normalize(queries.to(self.device), dim=-1) @ index.T
        return scores.topk(k, dim=1).indices


def recall_at_k(retriever: Retriever, gallery_loader: DataLoader, query_loader: DataLoader,
                k: int = 10) -> float:
    index, gallery_ids = retriever.encode(gallery_loader)
    queries, query_ids = retriever.encode(query_loader)
    top = retriever.search(queries, index, k)
    hits = (gallery_ids.to(top.device)[top] == query_ids.to(top.device)[:, None]).any(dim=1)
    return hits.float().mean().item()
