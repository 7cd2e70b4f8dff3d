"""Variable-length speech recognition (CTC) trainer that skips batches which run out of memory."""
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class CTCTrainer:
    def __init__(self, model, loader, blank=0, lr=5e-4, grad_clip=5.0, device="cuda"):
        self.model = model.to(device)
        self.loader = loader
        self.blank = blank
        self.grad_clip = grad_clip
        self.device = device
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.98), weight_decay=1e-3)
        self.global_step = 0
        self.skipped = []

    def _forward_backward(self, batch):
        feats = batch["features"].to(self.device, non_blocking=True)
        feat_lens = batch["feature_lengths"].to(self.device)
        targets = batch["targets"].to(self.device)
        target_lens = batch["target_lengths"].to(self.device)
        log_probs, out_lens = self.model(feats, feat_lens)
        loss = F.ctc_loss(log_probs.transpose(0, 1), targets, out_lens, target_lens,
                          blank=self.blank, reduction="mean", zero_infinity=True)
        loss.backward()
        return loss

    def _train_step(self, batch):
        try:
            loss = self._forward_backward(batch)
        except torch.cuda.OutOfMemoryError as e:
            self.skipped.append((self.global_step, batch["features"].shape, str(e)))
            logger.warning("OOM at step %d with input %s, skipping batch", self.global_step,
                           tuple(batch["features"].shape))
            self.optimizer.zero_grad(set_to_none=True)
            torch.cuda.empty_cache()
            return None
        nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return loss.item()

    def train_epoch(self, epoch, log_every=100):
        self.model.train()
        total, n = 0.0, 0
        for batch in self.loader:
            loss = self._train_step(batch)
            self.global_step += 1
            if loss is None:
                continue
            total += loss
            n += 1
            if self.global_step % log_every == 0:
                logger.info("epoch %d step %d ctc %.4f skipped %d", epoch, self.global_step,
                            total / max(n, 1), len(self.skipped))
        return total / max(n, 1)

    def fit(self, epochs):
        for epoch in range(epochs):
            avg = self.train_epoch(epoch)
            logger.info("epoch %d done: avg ctc %.4f, %d OOM batches so far", epoch, avg, len(self.skipped))
            torch.save(self.model.state_dict(), f"asr_epoch{epoch}.pt")
