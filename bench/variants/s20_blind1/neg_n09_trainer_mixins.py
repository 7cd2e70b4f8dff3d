"""Mixins composing the in-house ``Trainer``.

``Trainer`` = ``LossTrackingMixin`` + ``CheckpointMixin`` + ``TrainerBase``.
``TrainerBase.fit`` drives the loop and calls the ``_on_*`` hooks that the mixins
implement; each mixin only touches its own attributes.
"""
import logging
import os
import time

import torch

logger = logging.getLogger(__name__)


class LossTrackingMixin:
    """Keeps the current batch loss and the running average since the run started."""

    report_every = 100

    def _init_loss_tracking(self):
        self.batch_loss = None
        self.cumulative_loss = 0.0
        self.steps_done = 0
        self._last_report = time.time()

    def _on_after_backward(self):
        self.cumulative_loss += self.batch_loss.item()
        self.steps_done += 1
        if self.steps_done % self.report_every == 0:
            now = time.time()
            rate = self.report_every / max(now - self._last_report, 1e-6)
            self._last_report = now
            logger.info(
                "step %d | loss %.4f | avg %.4f | %.1f it/s",
                self.steps_done,
                self.batch_loss.item(),
                self.cumulative_loss / self.steps_done,
                rate,
            )

    def loss_state(self):
        return {"cumulative_loss": self.cumulative_loss, "steps_done": self.steps_done}


class CheckpointMixin:
    """Periodic checkpointing; expects ``self.model`` / ``self.optimizer`` / ``self.ckpt_dir``."""

    save_every = 1000

    def _maybe_save(self, step):
        if step == 0 or step % self.save_every:
            return
        path = os.path.join(self.ckpt_dir, f"step_{step:08d}.pt")
        torch.save(
            {
                "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "step": step,
                "loss_state": self.loss_state(),
            },
            path,
        )
        logger.info("saved %s", path)

    def load_checkpoint(self, path):
        state = torch.load(path, map_location="cpu")
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        ls = state.get("loss_state", {})
        self.cumulative_loss = ls.get("cumulative_loss", 0.0)
        self.steps_done = ls.get("steps_done", 0)
        return state["step"]


class TrainerBase:
    def __init__(self, model, optimizer, loss_fn, device="cuda", grad_accum=1, ckpt_dir="ckpt"):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.loss_fn = loss_fn
        self.device = device
        self.grad_accum = grad_accum
        self.ckpt_dir = ckpt_dir
        os.makedirs(ckpt_dir, exist_ok=True)

    def _to_device(self, batch):
        return {k: v.to(self.device, non_blocking=True) if torch.is_tensor(v) else v for k, v in batch.items()}

    def _forward_backward(self, batch):
        batch = self._to_device(batch)
        preds = self.model(batch["inputs"])
        self.batch_loss = self.loss_fn(preds, batch["targets"]) / self.grad_accum
        self.batch_loss.backward()

    def fit(self, loader, epochs=1, start_step=0):
        step = start_step
        self.model.train()
        for epoch in range(epochs):
            for i, batch in enumerate(loader):
                self._forward_backward(batch)
                self._on_after_backward()
                if (i + 1) % self.grad_accum == 0:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                    self.optimizer.step()
                    self.optimizer.zero_grad(set_to_none=True)
                    step += 1
                    self._maybe_save(step)
            logger.info("epoch %d finished at step %d", epoch, step)
        return step


class Trainer(LossTrackingMixin, CheckpointMixin, TrainerBase):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._init_loss_tracking()
