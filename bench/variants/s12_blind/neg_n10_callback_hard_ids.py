"""Callback that collects ids (not tensors) of hard examples for re-weighting."""
import heapq
from typing import Any, Mapping

import torch


class Callback:
    def on_batch_end(self, trainer, batch: Mapping[str, Any], outputs: Mapping[str, Any]) -> None: ...
    def on_epoch_end(self, trainer, epoch: int) -> None: ...


class HardExampleMiner(Callback):
    def __init__(self, top_k: int = 512) -> None:
        self.top_k = top_k
        self._heap: list[tuple[float, int]] = []
        self.epoch_loss_sum = 0.0
        self.n_batches = 0

    def on_batch_end(self, trainer, batch, outputs) -> None:
        per_sample = outputs["per_sample_loss"].detach().float().cpu()
        for loss_val, idx in zip(per_sample.tolist(), batch["ids"].tolist()):
            if len(self._heap) < self.top_k:
                heapq.heappush(self._heap, (loss_val, idx))
            else:
                heapq.heappushpop(self._heap, (loss_val, idx))
        self.epoch_loss_sum += outputs["loss"].item()
        self.n_batches += 1

    def on_epoch_end(self, trainer, epoch: int) -> None:
        hard_ids = [i for _, i in sorted(self._heap, key=lambda t: -t[0])]
        trainer.logger.info("epoch %d mean loss %.4f, hardest: %s", epoch,
                            self.epoch_loss_sum / max(self.n_batches, 1), hard_ids[:10])
        trainer.sampler.upweight(hard_ids)
        self._heap.clear()
        self.epoch_loss_sum, self.n_batches = 0.0, 0


def fit(model, optimizer, loader, callbacks, epochs: int, trainer) -> None:
    for epoch in range(epochs):
        for batch in loader:
            logits = model(batch["x"].cuda())
            per_sample = torch.nn.functional.cross_entropy(logits, batch["y"].cuda(), reduction="none")
            loss = per_sample.mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            for cb in callbacks:
                cb.on_batch_end(trainer, batch, {"per_sample_loss": per_sample, "loss": loss})
        for cb in callbacks:
            cb.on_epoch_end(trainer, epoch)
