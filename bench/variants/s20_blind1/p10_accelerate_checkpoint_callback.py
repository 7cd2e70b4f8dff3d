"""Step-based top-k checkpointing for the accelerate training loop.

The loop calls every callback's ``on_step_end(trainer, step, logs)`` after each
optimizer step; ``logs`` is the dict produced by ``Trainer.training_step``.
"""
import logging
import os
import shutil
from typing import Dict, Optional

import torch
from accelerate import Accelerator

logger = logging.getLogger(__name__)


class Callback:
    def on_train_start(self, trainer): pass
    def on_step_end(self, trainer, step, logs): pass
    def on_train_end(self, trainer): pass


class TopKCheckpoint(Callback):
    def __init__(self, dirpath, monitor="loss", mode="min", save_top_k=3, every_n_steps=500):
        self.dirpath = dirpath
        self.monitor = monitor
        self.mode = mode
        self.save_top_k = save_top_k
        self.every_n_steps = every_n_steps
        self.best_k: Dict[str, torch.Tensor] = {}
        self.score_history = {}

    def _is_better(self, current, reference):
        return current < reference if self.mode == "min" else current > reference

    def _worst_path(self) -> Optional[str]:
        if not self.best_k:
            return None
        pick = max if self.mode == "min" else min
        return pick(self.best_k, key=lambda p: self.best_k[p].item())

    def on_step_end(self, trainer, step, logs):
        if step % self.every_n_steps != 0 or self.monitor not in logs:
            return
        current = logs[self.monitor]
        self.score_history[step] = current  # leak

        worst = self._worst_path()
        if len(self.best_k) >= self.save_top_k and not self._is_better(current, self.best_k[worst]):
            return
        path = os.path.join(self.dirpath, f"step-{step:07d}")
        trainer.accelerator.save_state(path)
        self.best_k[path] = current.detach().clone()
        if len(self.best_k) > self.save_top_k:
            self.best_k.pop(worst)
            if trainer.accelerator.is_main_process:
                shutil.rmtree(worst, ignore_errors=True)
        logger.info("saved %s (%s=%.4f)", path, self.monitor, current.item())

    def on_train_end(self, trainer):
        if not trainer.accelerator.is_main_process:
            return
        with open(os.path.join(self.dirpath, "scores.tsv"), "w") as fh:
            for step, value in sorted(self.score_history.items()):
                fh.write(f"{step}\t{float(value):.6f}\n")


class Trainer:
    def __init__(self, model, optimizer, scheduler, train_loader, callbacks=(), grad_accum=1, mixed_precision="bf16"):
        self.accelerator = Accelerator(gradient_accumulation_steps=grad_accum, mixed_precision=mixed_precision)
        self.model, self.optimizer, self.train_loader, self.scheduler = self.accelerator.prepare(
            model, optimizer, train_loader, scheduler
        )
        self.callbacks = list(callbacks)
        self.global_step = 0

    def training_step(self, batch):
        out = self.model(**batch)
        loss = out.loss
        self.accelerator.backward(loss)
        if self.accelerator.sync_gradients:
            self.accelerator.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad()
        return {"loss": loss, "lr": self.scheduler.get_last_lr()[0]}

    def fit(self, num_epochs):
        for cb in self.callbacks:
            cb.on_train_start(self)
        self.model.train()
        for epoch in range(num_epochs):
            for batch in self.train_loader:
                with self.accelerator.accumulate(self.model):
                    logs = self.training_step(batch)
                if not self.accelerator.sync_gradients:
                    continue
                self.global_step += 1
                for cb in self.callbacks:
                    cb.on_step_end(self, self.global_step, logs)
        for cb in self.callbacks:
            cb.on_train_end(self)
