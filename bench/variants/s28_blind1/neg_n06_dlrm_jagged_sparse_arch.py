"""DLRM-style CTR model over jagged multi-hot categorical features (sum-pooled embedding bags)."""
from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field
from typing import List, Sequence, Tuple

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


@dataclass
class DLRMConfig:
    num_embeddings: List[int] = field(default_factory=lambda: [100_000] * 26)
    embedding_dim: int = 64
    dense_in: int = 13
    bottom_mlp: Tuple[int, ...] = (512, 256, 64)
    top_mlp: Tuple[int, ...] = (512, 256)


def mlp(in_dim: int, sizes: Sequence[int], final_act: bool = True) -> nn.Sequential:
    layers: List[nn.Module] = []
    for i, out_dim in enumerate(sizes):
        layers.append(nn.Linear(in_dim, out_dim))
        if final_act or i < len(sizes) - 1:
            layers.append(nn.ReLU(inplace=True))
        in_dim = out_dim
    return nn.Sequential(*layers)


@functools.lru_cache(maxsize=8)
def tril_pairs(n: int) -> Tuple[List[int], List[int]]:
    rows, cols = [], []
    for i in range(n):
        for j in range(i):
            rows.append(i)
            cols.append(j)
    return rows, cols


class SparseArch(nn.Module):
    def __init__(self, num_embeddings: Sequence[int], dim: int):
        super().__init__()
        self.tables = nn.ModuleList(nn.EmbeddingBag(n, dim, mode="sum") for n in num_embeddings)

    @staticmethod
    def _offsets(lengths: torch.Tensor) -> torch.Tensor:
        # lengths: [num_features, batch] -> per-feature bag offsets
        offsets = torch.zeros_like(lengths)
        offsets[:, 1:] = torch.cumsum(lengths[:, :-1], dim=1)
        return offsets

    def forward(self, values: List[torch.Tensor], lengths: torch.Tensor) -> torch.Tensor:
        offsets = self._offsets(lengths)
        pooled = [table(values[f], offsets[f]) for f, table in enumerate(self.tables)]
        return torch.stack(pooled, dim=1)  # [B, F, D]


class DotInteraction(nn.Module):
    def forward(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        feats = torch.cat([dense.unsqueeze(1), sparse], dim=1)  # [B, F+1, D]
        gram = torch.bmm(feats, feats.transpose(1, 2))
        rows, cols = tril_pairs(feats.shape[1])
        idx_r = torch.as_tensor(rows, device=gram.device)
        idx_c = torch.as_tensor(cols, device=gram.device)
        return torch.cat([dense, gram[:, idx_r, idx_c]], dim=1)


class DLRM(nn.Module):
    def __init__(self, cfg: DLRMConfig):
        super().__init__()
        if cfg.bottom_mlp[-1] != cfg.embedding_dim:
            raise ValueError("last bottom MLP layer must match embedding_dim")
        self.bottom = mlp(cfg.dense_in, cfg.bottom_mlp)
        self.sparse = SparseArch(cfg.num_embeddings, cfg.embedding_dim)
        self.interaction = DotInteraction()
        n_f = len(cfg.num_embeddings) + 1
        inter_dim = cfg.embedding_dim + n_f * (n_f - 1) // 2
        self.top = nn.Sequential(mlp(inter_dim, cfg.top_mlp), nn.Linear(cfg.top_mlp[-1], 1))

    def forward(self, dense: torch.Tensor, values: List[torch.Tensor], lengths: torch.Tensor) -> torch.Tensor:
        d = self.bottom(dense)
        s = self.sparse(values, lengths)
        return self.top(self.interaction(d, s)).squeeze(-1)


def train_epoch(model: DLRM, loader, optimizer, device: torch.device, log_every: int = 500) -> float:
    model.train()
    loss_fn = nn.BCEWithLogitsLoss()
    running = 0.0
    for i, (dense, values, lengths, labels) in enumerate(loader):
        dense, lengths, labels = dense.to(device), lengths.to(device), labels.to(device).float()
        values = [v.to(device, non_blocking=True) for v in values]
        loss = loss_fn(model(dense, values, lengths), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        running += loss.item()
        if (i + 1) % log_every == 0:
            logger.info("batch %d  logloss %.5f", i + 1, running / log_every)
            running = 0.0
    return running
