"""Small text-classification fine-tuning loop.

``BaseTrainer`` implements the epoch template; model-specific subclasses only
implement ``training_step`` and return a ``StepOutput``.
"""
from __future__ import annotations

import argparse
import logging
import math
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("finetune")


@dataclass
class StepOutput:
    loss: torch.Tensor
    logits: Optional[torch.Tensor] = None
    num_items: int = 0
    extras: Dict[str, Any] = field(default_factory=dict)

    def detached(self) -> "StepOutput":
        """Copy safe to keep around after backward: no graph, no logits."""
        return replace(self, loss=self.loss.detach(), logits=None)


@dataclass
class TrainConfig:
    epochs: int = 3
    lr: float = 3e-4
    batch_size: int = 32
    grad_clip: float = 1.0
    log_every: int = 25


class BaseTrainer:
    def __init__(self, model: nn.Module, cfg: TrainConfig):
        self.model = model
        self.cfg = cfg
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        self.global_step = 0
        self.history: List[Dict[str, float]] = []

    def training_step(self, batch) -> StepOutput:
        raise NotImplementedError

    def on_epoch_end(self, epoch: int, outputs: List[StepOutput]) -> None:
        total = sum(o.num_items for o in outputs)
        mean_loss = sum(o.loss * o.num_items for o in outputs) / max(total, 1)
        self.history.append({"epoch": epoch, "loss": float(mean_loss)})
        log.info("epoch %d  mean loss %.4f  ppl %.2f", epoch, float(mean_loss), math.exp(float(mean_loss)))

    def train_epoch(self, loader: DataLoader, epoch: int) -> None:
        self.model.train()
        step_outputs: List[StepOutput] = []
        for batch in loader:
            out = self.training_step(batch)
            self.optimizer.zero_grad(set_to_none=True)
            out.loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip)
            self.optimizer.step()
            self.global_step += 1
            step_outputs.append(out.detached())
            if self.global_step % self.cfg.log_every == 0:
                log.info("step %d loss %.4f", self.global_step, out.loss.item())
        self.on_epoch_end(epoch, step_outputs)

    def fit(self, loader: DataLoader) -> None:
        for epoch in range(self.cfg.epochs):
            self.train_epoch(loader, epoch)


class BagOfEmbeddings(nn.Module):
    def __init__(self, vocab_size=2000, dim=64, num_labels=4):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.head = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, num_labels))

    def forward(self, input_ids):
        return self.head(self.emb(input_ids))


class SequenceClassificationTrainer(BaseTrainer):
    def __init__(self, model, cfg, label_smoothing=0.0):
        super().__init__(model, cfg)
        self.loss_fn = nn.CrossEntropyLoss(label_smoothing=label_smoothing)

    def training_step(self, batch) -> StepOutput:
        input_ids, labels = batch["input_ids"], batch["labels"]
        logits = self.model(input_ids)
        loss = self.loss_fn(logits, labels)
        acc = (logits.argmax(-1) == labels).float().mean().item()
        return StepOutput(loss=loss, logits=logits, num_items=labels.numel(), extras={"acc": acc})


class RandomTextDataset(Dataset):
    def __init__(self, n=4000, seq_len=48, vocab=2000, num_labels=4, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, vocab, (n, seq_len), generator=g)
        self.labels = torch.randint(0, num_labels, (n,), generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.labels[i]}


def parse_args() -> TrainConfig:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--batch-size", type=int, default=32)
    a = ap.parse_args()
    return TrainConfig(epochs=a.epochs, lr=a.lr, batch_size=a.batch_size)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    cfg = parse_args()
    loader = DataLoader(RandomTextDataset(), batch_size=cfg.batch_size, shuffle=True)
    trainer = SequenceClassificationTrainer(BagOfEmbeddings(), cfg, label_smoothing=0.1)
    trainer.fit(loader)
