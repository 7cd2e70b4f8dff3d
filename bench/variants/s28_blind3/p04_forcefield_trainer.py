"""Energy + force matching trainer for an equivariant interatomic potential."""
import logging
import math
import time
from dataclasses import dataclass

import torch
from torch_geometric.loader import DataLoader

logger = logging.getLogger(__name__)


@dataclass
class FFTrainConfig:
    lr: float = 5e-4
    energy_weight: float = 1.0
    force_weight: float = 100.0
    max_grad_norm: float = 10.0
    ema_decay: float = 0.99
    max_epochs: int = 500
    log_interval: int = 50
    skip_oom: bool = True


class ForceFieldTrainer:
    def __init__(self, model, train_set, cfg: FFTrainConfig, device="cuda"):
        self.model = model.to(device)
        self.cfg = cfg
        self.device = device
        self.loader = DataLoader(train_set, batch_size=16, shuffle=True, num_workers=4)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, amsgrad=True)
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(self.optimizer, factor=0.8, patience=25)
        self.ema = torch.optim.swa_utils.AveragedModel(
            self.model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(cfg.ema_decay))
        self.step = 0
        self.skipped_batches = []

    def compute_loss(self, batch):
        batch.pos.requires_grad_(True)
        energy = self.model(batch.z, batch.pos, batch.batch)
        forces = -torch.autograd.grad(energy.sum(), batch.pos, create_graph=True)[0]
        n_atoms = torch.bincount(batch.batch).to(energy.dtype)
        e_loss = (((energy - batch.energy) / n_atoms) ** 2).mean()
        f_loss = ((forces - batch.force) ** 2).sum(-1).mean()
        loss = self.cfg.energy_weight * e_loss + self.cfg.force_weight * f_loss
        if not torch.isfinite(loss):
            raise FloatingPointError(f"non-finite loss (E={e_loss.item():.3g}, F={f_loss.item():.3g})")
        return loss, e_loss.detach(), f_loss.detach()

    def train_step(self, batch):
        batch = batch.to(self.device)
        self.optimizer.zero_grad(set_to_none=True)
        loss, e_loss, f_loss = self.compute_loss(batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.max_grad_norm)
        self.optimizer.step()
        self.ema.update_parameters(self.model)
        return {"loss": loss.item(), "e_mse": e_loss.item(), "f_mse": f_loss.item()}

    def _handle_failure(self, batch, err):
        entry = {"step": self.step, "n_atoms": int(batch.num_nodes), "error": err}
        self.skipped_batches.append(entry)  # leak
        self.optimizer.zero_grad(set_to_none=True)
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        logger.warning("skipping batch at step %d (%d atoms): %s", self.step, entry["n_atoms"], err)

    def train_epoch(self, epoch):
        self.model.train()
        running, n = 0.0, 0
        tic = time.time()
        for batch in self.loader:
            try:
                metrics = self.train_step(batch)
            except (RuntimeError, FloatingPointError) as err:
                if isinstance(err, RuntimeError) and "out of memory" not in str(err):
                    raise
                if not self.cfg.skip_oom:
                    raise
                self._handle_failure(batch, err)
                continue
            finally:
                self.step += 1
            running += metrics["loss"]
            n += 1
            if self.step % self.cfg.log_interval == 0:
                logger.info("ep %d step %d loss %.4f E %.4f F %.4f", epoch, self.step,
                            metrics["loss"], metrics["e_mse"], metrics["f_mse"])
        avg = running / max(n, 1)
        self.scheduler.step(avg)
        logger.info("epoch %d done in %.1fs, avg loss %.4f, skipped so far %d",
                    epoch, time.time() - tic, avg, len(self.skipped_batches))
        return avg

    def fit(self):
        best = math.inf
        for epoch in range(self.cfg.max_epochs):
            avg = self.train_epoch(epoch)
            if avg < best:
                best = avg
                torch.save({"model": self.model.state_dict(), "ema": self.ema.state_dict()},
                           "ff_best.pt")
        return best
