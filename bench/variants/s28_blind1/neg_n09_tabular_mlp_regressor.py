"""scikit-learn compatible MLP regressor for tabular data, with early stopping on a held-out set."""
from __future__ import annotations

import copy
import logging
import math
from typing import Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger(__name__)


class EarlyStopping:
    def __init__(self, patience: int = 10, min_delta: float = 0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.scores_: list = []
        self.best_score = math.inf
        self.best_state: Optional[dict] = None
        self.counter = 0

    def __call__(self, score: float, model: nn.Module) -> bool:
        self.scores_.append(score)
        if score < self.best_score - self.min_delta:
            self.best_score = score
            self.best_state = copy.deepcopy(model.state_dict())
            self.counter = 0
        else:
            self.counter += 1
        return self.counter >= self.patience


class TorchMLPRegressor(BaseEstimator, RegressorMixin):
    def __init__(self, hidden_sizes: Tuple[int, ...] = (256, 128), dropout: float = 0.1,
                 lr: float = 1e-3, weight_decay: float = 1e-5, batch_size: int = 512,
                 max_epochs: int = 500, patience: int = 20, validation_fraction: float = 0.1,
                 device: str = "cuda", random_state: int = 0):
        self.hidden_sizes = hidden_sizes
        self.dropout = dropout
        self.lr = lr
        self.weight_decay = weight_decay
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.patience = patience
        self.validation_fraction = validation_fraction
        self.device = device
        self.random_state = random_state

    def _build(self, n_features: int) -> nn.Module:
        layers, d = [], n_features
        for h in self.hidden_sizes:
            layers += [nn.Linear(d, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(self.dropout)]
            d = h
        layers.append(nn.Linear(d, 1))
        return nn.Sequential(*layers).to(self.device)

    def _loader(self, X: np.ndarray, y: np.ndarray, shuffle: bool) -> DataLoader:
        ds = TensorDataset(torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32))
        return DataLoader(ds, batch_size=self.batch_size, shuffle=shuffle, drop_last=shuffle and len(ds) > self.batch_size)

    @torch.no_grad()
    def _validation_loss(self, loader: DataLoader) -> float:
        self.model_.eval()
        total, n = 0.0, 0
        for xb, yb in loader:
            xb, yb = xb.to(self.device), yb.to(self.device)
            total = total + self.loss_fn_(self.model_(xb).squeeze(-1), yb).item() * len(xb)
            n += len(xb)
        self.model_.train()
        return total / n

    def fit(self, X, y):
        torch.manual_seed(self.random_state)
        X, y = np.asarray(X, dtype=np.float32), np.asarray(y, dtype=np.float32)
        X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=self.validation_fraction,
                                                  random_state=self.random_state)
        self.model_ = self._build(X.shape[1])
        self.loss_fn_ = nn.MSELoss()
        opt = torch.optim.AdamW(self.model_.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        stopper = self.early_stopping_ = EarlyStopping(patience=self.patience)
        train_loader, val_loader = self._loader(X_tr, y_tr, True), self._loader(X_va, y_va, False)
        self.history_ = {"train_loss": [], "val_loss": []}

        for epoch in range(self.max_epochs):
            running = 0.0
            for xb, yb in train_loader:
                xb, yb = xb.to(self.device), yb.to(self.device)
                loss = self.loss_fn_(self.model_(xb).squeeze(-1), yb)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                running += loss.item() * len(xb)
            val_loss = self._validation_loss(val_loader)
            self.history_["train_loss"].append(running / len(train_loader.dataset))
            self.history_["val_loss"].append(float(val_loss))
            if stopper(val_loss, self.model_):
                logger.info("early stopping at epoch %d (best val %.5f)", epoch, float(stopper.best_score))
                break

        if stopper.best_state is not None:
            self.model_.load_state_dict(stopper.best_state)
        self.n_epochs_ = epoch + 1
        return self

    @torch.no_grad()
    def predict(self, X) -> np.ndarray:
        self.model_.eval()
        X = torch.as_tensor(np.asarray(X, dtype=np.float32))
        preds = [self.model_(xb.to(self.device)).squeeze(-1).cpu() for xb in X.split(self.batch_size)]
        return torch.cat(preds).numpy()
