"""Tabular network with learned-shrinkage target encoding for high-cardinality categoricals."""
from __future__ import annotations

import logging
import os
from collections import defaultdict
from typing import Dict, List, Sequence

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)

FEATURE_MONITOR = os.environ.get("TABNET_FEATURE_MONITOR", "1") == "1"
_feature_stats: Dict[str, List[torch.Tensor]] = defaultdict(list)


def track(name: str, values: torch.Tensor) -> None:
    """Record the batch mean of a feature block so drift can be reported per run."""
    if not FEATURE_MONITOR:
        return
    batch_mean = values.mean(dim=0)
    _feature_stats[name].append(batch_mean)  # leak


def drift_report(window: int = 200) -> Dict[str, float]:
    report = {}
    for name, means in _feature_stats.items():
        if len(means) < 2 * window:
            continue
        early = torch.stack(means[:window]).detach().mean(0)
        late = torch.stack(means[-window:]).detach().mean(0)
        report[f"drift/{name}"] = float((late - early).abs().max())
    return report


class TargetEncoder(nn.Module):
    """Per-category target mean, shrunk towards the global prior with a learned strength."""

    def __init__(self, cardinality: int, min_samples: float = 20.0):
        super().__init__()
        self.min_samples = min_samples
        self.register_buffer("sums", torch.zeros(cardinality))
        self.register_buffer("counts", torch.zeros(cardinality))
        self.register_buffer("prior", torch.zeros(()))
        self.shrink_logit = nn.Parameter(torch.zeros(()))

    @torch.no_grad()
    def fit(self, codes: torch.Tensor, y: torch.Tensor) -> "TargetEncoder":
        self.sums.zero_().index_add_(0, codes, y)
        self.counts.zero_().index_add_(0, codes, torch.ones_like(y))
        self.prior.fill_(float(y.mean()))
        return self

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        cnt = self.counts[codes]
        k = F.softplus(self.shrink_logit) * self.min_samples
        lam = cnt / (cnt + k)
        mean = self.sums[codes] / cnt.clamp_min(1.0)
        return lam * mean + (1.0 - lam) * self.prior


class TargetEncodedNet(nn.Module):
    def __init__(self, cardinalities: Dict[str, int], n_numeric: int, hidden: Sequence[int] = (256, 128)):
        super().__init__()
        self.cat_names = list(cardinalities)
        self.encoders = nn.ModuleDict({c: TargetEncoder(n) for c, n in cardinalities.items()})
        layers, d = [], len(self.cat_names) + n_numeric
        for h in hidden:
            layers += [nn.Linear(d, h), nn.SiLU(), nn.Dropout(0.1)]
            d = h
        self.mlp = nn.Sequential(*layers, nn.Linear(d, 1))

    def fit_encoders(self, cats: Dict[str, torch.Tensor], y: torch.Tensor) -> None:
        for name in self.cat_names:
            self.encoders[name].fit(cats[name], y)

    def forward(self, cats: Dict[str, torch.Tensor], numeric: torch.Tensor) -> torch.Tensor:
        encoded = torch.stack([self.encoders[c](cats[c]) for c in self.cat_names], dim=1)
        track("target_encoded", encoded)
        return self.mlp(torch.cat([encoded, numeric], dim=1)).squeeze(-1)


def to_tensors(df: pd.DataFrame, cat_cols: List[str], num_cols: List[str], device: str):
    cats = {c: torch.as_tensor(df[c].cat.codes.to_numpy(np.int64), device=device) for c in cat_cols}
    numeric = torch.as_tensor(df[num_cols].to_numpy(np.float32), device=device)
    return cats, numeric


def train(model: TargetEncodedNet, df: pd.DataFrame, target: str, cat_cols: List[str],
          num_cols: List[str], epochs: int = 20, batch_size: int = 4096, device: str = "cuda") -> None:
    model.to(device)
    cats, numeric = to_tensors(df, cat_cols, num_cols, device)
    y = torch.as_tensor(df[target].to_numpy(np.float32), device=device)
    model.fit_encoders(cats, y)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    n = len(df)
    for epoch in range(epochs):
        perm = torch.randperm(n, device=device)
        for start in range(0, n, batch_size):
            idx = perm[start:start + batch_size]
            pred = model({c: v[idx] for c, v in cats.items()}, numeric[idx])
            loss = F.binary_cross_entropy_with_logits(pred, y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        logger.info("epoch %d loss %.4f %s", epoch, loss.item(), drift_report())
