"""Callbacks used by the SimCLR pretraining runs.

ProbeDriftCallback embeds a fixed probe batch at the end of every training epoch and
logs how far the representation moved since the previous epoch, plus a final
drift-vs-epoch heatmap at the end of training.
"""
from __future__ import annotations

import logging
import os
from typing import List, Optional

import lightning.pytorch as pl
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.utilities import rank_zero_only

log = logging.getLogger(__name__)


def _take_probe(datamodule: pl.LightningDataModule, n: int) -> torch.Tensor:
    ds = datamodule.val_dataset
    g = torch.Generator().manual_seed(0)
    idx = torch.randperm(len(ds), generator=g)[:n].tolist()
    views = [ds[i][0] for i in idx]
    # val transforms return a single view
    return torch.stack([v if torch.is_tensor(v) else v[0] for v in views])


class ProbeDriftCallback(Callback):
    def __init__(self, num_probe: int = 512, every_n_epochs: int = 1,
                 out_dir: Optional[str] = None) -> None:
        super().__init__()
        self.num_probe = num_probe
        self.every_n_epochs = every_n_epochs
        self.out_dir = out_dir
        self.probe: Optional[torch.Tensor] = None
        self.snapshots: List[torch.Tensor] = []
        self.epochs: List[int] = []

    def setup(self, trainer, pl_module, stage=None):
        if stage in (None, "fit") and self.probe is None:
            self.probe = _take_probe(trainer.datamodule, self.num_probe)
            log.info("probe batch: %s", tuple(self.probe.shape))

    def _embed(self, pl_module) -> torch.Tensor:
        was_training = pl_module.training
        pl_module.eval()
        z = pl_module.backbone(self.probe.to(pl_module.device))
        pl_module.train(was_training)
        return F.normalize(z.flatten(1), dim=1)

    def on_train_epoch_end(self, trainer, pl_module):
        if trainer.sanity_checking or trainer.current_epoch % self.every_n_epochs:
            return
        z = self._embed(pl_module)
        if self.snapshots:
            prev = self.snapshots[-1]
            drift = 1.0 - (z * prev).sum(1).mean()
            knn_overlap = self._knn_overlap(prev, z)
            pl_module.log("probe/drift", drift, sync_dist=True)
            pl_module.log("probe/knn_overlap@10", knn_overlap, sync_dist=True)
        self.snapshots.append(z)  # leak
        self.epochs.append(trainer.current_epoch)

    @staticmethod
    def _knn_overlap(a: torch.Tensor, b: torch.Tensor, k: int = 10) -> float:
        na = (a @ a.T).topk(k + 1, dim=1).indices[:, 1:]
        nb = (b @ b.T).topk(k + 1, dim=1).indices[:, 1:]
        same = (na.unsqueeze(2) == nb.unsqueeze(1)).any(2).float()
        return same.mean().item()

    @rank_zero_only
    def on_train_end(self, trainer, pl_module):
        if len(self.snapshots) < 2:
            return
        n = len(self.snapshots)
        mat = torch.zeros(n, n)
        for i in range(n):
            for j in range(n):
                mat[i, j] = 1.0 - (self.snapshots[i] * self.snapshots[j]).sum(1).mean().item()
        out_dir = self.out_dir or trainer.log_dir or "."
        os.makedirs(out_dir, exist_ok=True)
        fig, ax = plt.subplots(figsize=(6, 5))
        im = ax.imshow(mat.numpy(), cmap="viridis")
        ax.set_xticks(range(n), self.epochs, rotation=90, fontsize=6)
        ax.set_yticks(range(n), self.epochs, fontsize=6)
        ax.set_title("probe representation drift (1 - cos)")
        fig.colorbar(im, ax=ax)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "probe_drift.png"), dpi=150)
        plt.close(fig)
        log.info("saved drift matrix over %d epochs", n)


class LinearWarmupLogger(Callback):
    """Logs the current learning rate of every param group once per epoch."""

    def on_train_epoch_start(self, trainer, pl_module):
        for i, opt in enumerate(trainer.optimizers):
            for j, group in enumerate(opt.param_groups):
                pl_module.log(f"lr/opt{i}_group{j}", group["lr"], on_epoch=True, on_step=False)
