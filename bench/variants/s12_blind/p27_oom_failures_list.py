import gc
import logging

import torch
import torch.nn as nn

log = logging.getLogger("train")


class RobustTrainer:
    """Skips batches that OOM instead of crashing a 3-day run."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, max_failures: int = 50) -> None:
        self.model = model
        self.optimizer = optimizer
        self.max_failures = max_failures
        self.failures: list[BaseException] = []
        self.skipped = 0

    def _step(self, batch: dict) -> float:
        out = self.model(**{k: v.cuda() for k, v in batch.items()})
        loss = out["loss"]
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def train_step(self, batch: dict) -> float | None:
        try:
            return self._step(batch)
        except torch.cuda.OutOfMemoryError as e:
            self.failures.append(e)  # leak
            self.skipped += 1
            log.warning("OOM on batch of shape %s; skipping (%d so far)", tuple(batch["input_ids"].shape), self.skipped)
            self.optimizer.zero_grad(set_to_none=True)
            gc.collect()
            torch.cuda.empty_cache()
            if self.skipped > self.max_failures:
                raise RuntimeError("too many OOMs") from e
            return None

    def fit(self, loader, epochs: int = 1) -> None:
        for epoch in range(epochs):
            losses = [l for batch in loader if (l := self.train_step(batch)) is not None]
            log.info("epoch %d mean loss %.4f skipped=%d", epoch, sum(losses) / max(len(losses), 1), self.skipped)
