"""Custom callback for our in-house Trainer that collects hard examples."""
from typing import Any, Mapping

import torch


class Callback:
    def on_train_begin(self, trainer) -> None: ...
    def on_batch_end(self, trainer, batch: Mapping[str, Any], outputs: Mapping[str, Any]) -> None: ...
    def on_epoch_end(self, trainer, epoch: int) -> None: ...


class HardExampleMiner(Callback):
    def __init__(self, top_k: int = 64, loss_threshold: float = 2.0) -> None:
        self.top_k = top_k
        self.loss_threshold = loss_threshold
        self.hard_logits: list[torch.Tensor] = []
        self.hard_ids: list[int] = []

    def on_batch_end(self, trainer, batch, outputs) -> None:
        per_sample = outputs["per_sample_loss"]
        hard = per_sample > self.loss_threshold
        if hard.any():
            self.hard_logits.append(outputs["logits"][hard])  # leak
            self.hard_ids.extend(batch["ids"][hard].tolist())

    def on_epoch_end(self, trainer, epoch: int) -> None:
        trainer.logger.info("epoch %d: %d hard examples so far", epoch, len(self.hard_ids))


class Trainer:
    def __init__(self, model, optimizer, callbacks=(), logger=None) -> None:
        self.model = model
        self.optimizer = optimizer
        self.callbacks = list(callbacks)
        self.logger = logger

    def fit(self, loader, epochs: int) -> None:
        for cb in self.callbacks:
            cb.on_train_begin(self)
        for epoch in range(epochs):
            for batch in loader:
                logits = self.model(batch["x"].cuda())
                per_sample = torch.nn.functional.cross_entropy(logits, batch["y"].cuda(), reduction="none")
                loss = per_sample.mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                outputs = {"logits": logits, "per_sample_loss": per_sample, "loss": loss}
                for cb in self.callbacks:
                    cb.on_batch_end(self, batch, outputs)
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)
