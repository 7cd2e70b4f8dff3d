"""Trainer for variable-length document classification.

Batches are bucketed by token count, but a few very long documents still
occasionally exceed memory. On OOM the step is retried by splitting the
batch in two and accumulating gradients.
"""
import logging
import math
from dataclasses import dataclass
from typing import Dict

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)


@dataclass
class TrainConfig:
    lr: float = 3e-5
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    epochs: int = 4
    log_every: int = 50
    warmup_ratio: float = 0.06


def split_batch(batch: Dict[str, torch.Tensor]):
    n = next(iter(batch.values())).size(0)
    half = max(1, n // 2)
    first = {k: v[:half] for k, v in batch.items()}
    second = {k: v[half:] for k, v in batch.items()}
    return [b for b in (first, second) if next(iter(b.values())).size(0) > 0]


class DocTrainer:
    def __init__(self, model, train_loader, cfg: TrainConfig, device="cuda"):
        self.model = model.to(device)
        self.loader = train_loader
        self.cfg = cfg
        self.device = device
        self.opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        total = cfg.epochs * len(train_loader)
        warm = int(total * cfg.warmup_ratio)
        self.sched = torch.optim.lr_scheduler.LambdaLR(
            self.opt, lambda s: min(1.0, (s + 1) / max(1, warm)) * max(0.0, (total - s) / max(1, total - warm))
        )
        self.global_step = 0
        self.n_oom = 0

    def _fwd_bwd(self, batch, scale=1.0):
        batch = {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}
        logits = self.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        loss = F.cross_entropy(logits, batch["labels"])
        (loss * scale).backward()
        return loss.item() * scale

    def _fwd_bwd_split(self, batch):
        parts = split_batch(batch)
        return sum(self._fwd_bwd(p, scale=1.0 / len(parts)) for p in parts)

    def train_step(self, batch) -> float:
        self.model.train()
        self.opt.zero_grad(set_to_none=True)
        try:
            loss = self._fwd_bwd(batch)
        except torch.cuda.OutOfMemoryError:
            self.n_oom += 1
            logger.warning("OOM at step %d (batch %s); retrying in halves",
                           self.global_step, tuple(batch["input_ids"].shape))
            self.opt.zero_grad(set_to_none=True)
            torch.cuda.empty_cache()
            loss = self._fwd_bwd_split(batch)  # leak
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.max_grad_norm)
        self.opt.step()
        self.sched.step()
        self.global_step += 1
        return loss

    def fit(self):
        for epoch in range(self.cfg.epochs):
            running, n = 0.0, 0
            for batch in self.loader:
                loss = self.train_step(batch)
                if math.isfinite(loss):
                    running += loss
                    n += 1
                if self.global_step % self.cfg.log_every == 0:
                    logger.info("epoch %d step %d loss %.4f lr %.2e ooms %d", epoch, self.global_step,
                                running / max(n, 1), self.sched.get_last_lr()[0], self.n_oom)
                    running, n = 0.0, 0


if __name__ == "__main__":
    from transformers import AutoModelForSequenceClassification
    from torch.utils.data import DataLoader
    from data import BucketedDocDataset, collate_docs  # project module

    logging.basicConfig(level=logging.INFO)
    mdl = AutoModelForSequenceClassification.from_pretrained("allenai/longformer-base-4096", num_labels=20)
    dl = DataLoader(BucketedDocDataset("train.jsonl", max_tokens=16384), batch_size=None, collate_fn=collate_docs)
    DocTrainer(mdl, dl, TrainConfig()).fit()
