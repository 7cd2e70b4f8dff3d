"""Epoch-level AUROC logging for binary classifiers trained with Lightning.

Lightning's built-in metrics are computed per batch; for imbalanced problems
we want the AUROC over the entire training epoch, so this callback gathers
the scores and targets that the LightningModule returns from training_step.
The buffers are emptied at the start and end of every epoch.
"""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback
from torchmetrics.functional.classification import binary_auroc

log = logging.getLogger(__name__)


class EpochAUROC(Callback):
    """Collects per-batch probabilities and reports an epoch AUROC."""

    def __init__(self, key: str = "probs", target_key: str = "target", prefix: str = "train"):
        super().__init__()
        self.key = key
        self.target_key = target_key
        self.prefix = prefix
        self._seen: List[Tuple[torch.Tensor, torch.Tensor]] = []

    def _reset(self) -> None:
        self._seen.clear()

    def on_train_epoch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._reset()

    def on_train_batch_end(
        self,
        trainer: pl.Trainer,
        pl_module: pl.LightningModule,
        outputs: Dict[str, Any],
        batch: Any,
        batch_idx: int,
    ) -> None:
        if outputs is None or self.key not in outputs:
            return
        self._seen.append((outputs[self.key].detach().cpu(), outputs[self.target_key].detach().cpu()))

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if not self._seen:
            return
        scores = torch.cat([s for s, _ in self._seen])
        targets = torch.cat([t for _, t in self._seen])
        self._reset()
        auroc = binary_auroc(scores, targets.long())
        pl_module.log(f"{self.prefix}/auroc_epoch", auroc, prog_bar=True, sync_dist=True)
        log.info("epoch %d auroc=%.4f (n=%d)", trainer.current_epoch, auroc.item(), scores.numel())


class TabularClassifier(pl.LightningModule):
    def __init__(self, in_features: int, hidden: int = 256, lr: float = 1e-3, pos_weight: Optional[float] = None):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.BatchNorm1d(hidden),
            nn.ReLU(),
            nn.Dropout(0.2),
            nn.Linear(hidden, hidden // 2),
            nn.ReLU(),
            nn.Linear(hidden // 2, 1),
        )
        pw = torch.tensor([pos_weight]) if pos_weight else None
        self.register_buffer("pos_weight", pw if pw is not None else torch.ones(1))

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.binary_cross_entropy_with_logits(logits, y.float(), pos_weight=self.pos_weight)
        self.log("train/loss", loss, on_step=True, on_epoch=True)
        return {"loss": loss, "probs": torch.sigmoid(logits), "target": y}

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.binary_cross_entropy_with_logits(logits, y.float(), pos_weight=self.pos_weight)
        self.log("val/loss", loss, prog_bar=True)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=1e-4)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.trainer.max_epochs)
        return {"optimizer": opt, "lr_scheduler": sched}


def build_trainer(max_epochs: int = 50, devices: int = 1) -> pl.Trainer:
    return pl.Trainer(
        max_epochs=max_epochs,
        accelerator="auto",
        devices=devices,
        callbacks=[EpochAUROC()],
        log_every_n_steps=25,
    )


if __name__ == "__main__":
    from torch.utils.data import DataLoader, TensorDataset

    x = torch.randn(20000, 64)
    y = (x[:, :4].sum(-1) > 1.5).long()
    ds = TensorDataset(x, y)
    train = DataLoader(ds, batch_size=256, shuffle=True, num_workers=2)
    model = TabularClassifier(64, pos_weight=4.0)
    build_trainer().fit(model, train)
