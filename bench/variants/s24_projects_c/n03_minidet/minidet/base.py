"""TrainerBase / SimpleTrainer (cf. detectron2.engine.train_loop)."""
import logging
import weakref
from typing import Dict, List

import torch

from .events import EventStorage

logger = logging.getLogger(__name__)


class TrainerBase:
    def __init__(self):
        self._hooks: List = []
        self.iter = 0
        self.start_iter = 0
        self.max_iter = 0
        self.storage = None

    def register_hooks(self, hooks) -> None:
        for h in hooks:
            if h is None:
                continue
            h.trainer = weakref.proxy(self)
            self._hooks.append(h)

    def train(self, start_iter: int, max_iter: int) -> None:
        logger.info("Starting training from iteration %d", start_iter)
        self.iter = self.start_iter = start_iter
        self.max_iter = max_iter
        with EventStorage(start_iter) as self.storage:
            for h in self._hooks:
                h.before_train()
            for self.iter in range(start_iter, max_iter):
                for h in self._hooks:
                    h.before_step()
                self.run_step()
                for h in self._hooks:
                    h.after_step()
                self.storage.step()
            self.iter += 1
            for h in self._hooks:
                h.after_train()

    def run_step(self):
        raise NotImplementedError

    def _write_metrics(self, loss_dict: Dict[str, torch.Tensor], data_time: float) -> None:
        metrics = {k: v.detach().cpu().item() for k, v in loss_dict.items()}
        total = sum(metrics.values())
        if not torch.isfinite(torch.tensor(total)):
            raise FloatingPointError(f"Loss became infinite or NaN at iteration={self.iter}: {metrics}")
        self.storage.put_scalar("data_time", data_time)
        self.storage.put_scalar("total_loss", total)
        if len(metrics) > 1:
            self.storage.put_scalars(**metrics)


class SimpleTrainer(TrainerBase):
    def __init__(self, model, data_loader, optimizer, device="cuda"):
        super().__init__()
        model.train()
        self.model = model
        self.data_loader = data_loader
        self._data_iter = iter(data_loader)
        self.optimizer = optimizer
        self.device = device

    def _next_batch(self):
        try:
            return next(self._data_iter)
        except StopIteration:
            self._data_iter = iter(self.data_loader)
            return next(self._data_iter)

    def run_step(self):
        import time

        t0 = time.perf_counter()
        images, targets = self._next_batch()
        data_time = time.perf_counter() - t0
        images = [im.to(self.device, non_blocking=True) for im in images]
        targets = [{k: v.to(self.device) for k, v in t.items()} for t in targets]
        loss_dict = self.model(images, targets)
        losses = sum(loss_dict.values())
        self.optimizer.zero_grad(set_to_none=True)
        losses.backward()
        self._write_metrics(loss_dict, data_time)
        self.optimizer.step()
