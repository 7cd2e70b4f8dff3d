"""Callbacks: per-epoch loss summary and queue health monitoring."""
import logging
from typing import List

import pytorch_lightning as pl
import torch

log = logging.getLogger(__name__)


class EpochLossSummary(pl.Callback):
    """Collects detached per-step losses and reports mean/std at epoch end.

    The buffer only ever holds one epoch's worth of scalars; it is emptied in
    :meth:`on_train_epoch_end`.
    """

    def __init__(self):
        super().__init__()
        self.step_losses: List[torch.Tensor] = []

    def on_train_epoch_start(self, trainer, pl_module):
        self.step_losses = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.step_losses.append(outputs["loss"].detach())

    def on_train_epoch_end(self, trainer, pl_module):
        if not self.step_losses:
            return
        losses = torch.stack(self.step_losses)
        pl_module.log("epoch/loss_mean", losses.mean())
        pl_module.log("epoch/loss_std", losses.std())
        log.info("epoch %d: loss %.4f +/- %.4f over %d steps", trainer.current_epoch,
                 losses.mean().item(), losses.std().item(), len(self.step_losses))
        self.step_losses.clear()


class QueueMonitor(pl.Callback):
    """Logs how similar queued keys are to each other (collapse indicator)."""

    def __init__(self, every_n_steps: int = 500, sample: int = 4096):
        super().__init__()
        self.every_n_steps = every_n_steps
        self.sample = sample

    @torch.no_grad()
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.global_step % self.every_n_steps:
            return
        queue = pl_module.queue[:, : self.sample]
        sim = (queue.T @ queue).fill_diagonal_(0)
        pl_module.log("queue/mean_cos", sim.sum() / (sim.numel() - queue.shape[1]))
