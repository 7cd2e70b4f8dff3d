"""Trainer hooks (cf. detectron2.engine.hooks)."""
import datetime
import logging
import os
import time

import torch

from minidet.events import get_event_storage

logger = logging.getLogger(__name__)


class HookBase:
    trainer = None

    def before_train(self):
        pass

    def after_train(self):
        pass

    def before_step(self):
        pass

    def after_step(self):
        pass


class IterationTimer(HookBase):
    def __init__(self, warmup_iter: int = 3):
        self._warmup = warmup_iter
        self._start = None
        self._total = 0.0

    def before_step(self):
        self._start = time.perf_counter()

    def after_step(self):
        dt = time.perf_counter() - self._start
        storage = get_event_storage()
        if self.trainer.iter - self.trainer.start_iter >= self._warmup:
            self._total += dt
            storage.put_scalar("time", dt)


class LRScheduler(HookBase):
    def __init__(self, scheduler):
        self.scheduler = scheduler

    def after_step(self):
        lr = self.trainer.optimizer.param_groups[0]["lr"]
        get_event_storage().put_scalar("lr", lr, smoothing_hint=False)
        self.scheduler.step()


class PeriodicWriter(HookBase):
    def __init__(self, period: int = 20):
        self.period = period

    def after_step(self):
        it = self.trainer.iter
        if (it + 1) % self.period and it != self.trainer.max_iter - 1:
            return
        storage = get_event_storage()
        losses = {k: storage.history(k).median(self.period) for k in storage.latest() if "loss" in k}
        eta = ""
        if "time" in storage.latest():
            secs = storage.history("time").global_avg() * (self.trainer.max_iter - it - 1)
            eta = f"eta: {datetime.timedelta(seconds=int(secs))}  "
        mem = torch.cuda.max_memory_allocated() / 2 ** 20 if torch.cuda.is_available() else 0.0
        logger.info("%siter: %d  %s  lr: %.5f  max_mem: %.0fM", eta, it,
                    "  ".join(f"{k}: {v:.4f}" for k, v in losses.items()),
                    storage.latest().get("lr", 0.0), mem)


class PeriodicCheckpointer(HookBase):
    def __init__(self, out_dir: str, period: int = 5000):
        self.out_dir = out_dir
        self.period = period

    def after_step(self):
        it = self.trainer.iter
        if (it + 1) % self.period == 0 or it == self.trainer.max_iter - 1:
            os.makedirs(self.out_dir, exist_ok=True)
            torch.save({"model": self.trainer.model.state_dict(), "iteration": it},
                       os.path.join(self.out_dir, f"model_{it:07d}.pth"))
