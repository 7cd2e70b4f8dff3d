"""Multi-step fine-tuning for an ERA5 forecaster (FourCastNet-style rollout loss)."""
import logging
import math
from typing import Callable, Dict, List

import torch
import torch.nn as nn

log = logging.getLogger(__name__)

VARIABLES = ("z500", "t850", "t2m", "u10", "v10", "msl")


def latitude_weights(n_lat: int, device) -> torch.Tensor:
    lat = torch.linspace(90.0, -90.0, n_lat, device=device)
    w = torch.cos(torch.deg2rad(lat))
    return (w / w.mean()).view(1, 1, n_lat, 1)


class RolloutFinetuner:
    def __init__(self, model: nn.Module, optimizer, cfg: Dict, tracker=None):
        self.model = model
        self.optimizer = optimizer
        self.cfg = cfg
        self.tracker = tracker
        self.rollout_steps = cfg.get("rollout_steps", 4)
        self.step_decay = cfg.get("step_decay", 1.0)
        self.scaler = torch.cuda.amp.GradScaler(enabled=cfg.get("amp", True))
        self.global_step = 0
        self._pending: List[Callable[[], Dict[str, float]]] = []
        self._lat_w = None

    def _weighted_mse(self, pred, target):
        if self._lat_w is None:
            self._lat_w = latitude_weights(pred.shape[-2], pred.device)
        return ((pred - target) ** 2 * self._lat_w).mean(dim=(0, 2, 3))

    def _queue_metrics(self, per_step_rmse):
        step = self.global_step
        self._pending.append(lambda: {
            f"rmse/{v}/lead{k + 1}": per_step_rmse[k][i].item()
            for k in range(len(per_step_rmse))
            for i, v in enumerate(VARIABLES)
        } | {"step": step})

    def training_step(self, batch):
        x, targets = batch["input"].cuda(non_blocking=True), batch["targets"].cuda(non_blocking=True)
        self.optimizer.zero_grad(set_to_none=True)
        per_step_rmse = []
        loss = 0.0
        state = x
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.cfg.get("amp", True)):
            for k in range(self.rollout_steps):
                state = self.model(state)
                per_var = self._weighted_mse(state.float(), targets[:, k])
                loss = loss + (self.step_decay ** k) * per_var.mean()
                err = state.float() - targets[:, k]
                per_step_rmse.append(err.detach().pow(2).mean(dim=(0, 2, 3)).sqrt())
        loss = loss / self.rollout_steps
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.get("clip", 1.0))
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self._queue_metrics(per_step_rmse)
        self.global_step += 1
        return loss.detach()

    def on_epoch_end(self, epoch):
        rows = [fn() for fn in self._pending]
        if self.tracker is not None:
            for row in rows:
                self.tracker.log(row, step=row["step"])
        self._pending.clear()
        log.info("epoch %d flushed %d metric rows", epoch, len(rows))

    def fit(self, loader, epochs, val_fn=None):
        self.model.train()
        for epoch in range(epochs):
            for i, batch in enumerate(loader):
                loss = self.training_step(batch)
                if i % 100 == 0:
                    log.info("epoch %d it %d loss %.4f", epoch, i, loss.item())
                if not math.isfinite(loss.item()):
                    raise RuntimeError(f"non-finite loss at step {self.global_step}")
            self.on_epoch_end(epoch)
            if val_fn is not None:
                val_fn(self.model, epoch)
