import torch
import torch.nn as nn
import torch.nn.functional as F


class ResilientTrainer:
    def __init__(self, model, optimizer, scheduler=None, grad_clip=1.0, device="cuda"):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.grad_clip = grad_clip
        self.device = device
        self.errors = []
        self.skipped = 0

    def _step(self, batch):
        inputs, targets = (t.to(self.device) for t in batch)
        logits = self.model(inputs)
        loss = F.cross_entropy(logits, targets)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
        self.optimizer.step()
        return loss.item()

    def train_epoch(self, loader):
        self.model.train()
        total, n = 0.0, 0
        for batch_idx, batch in enumerate(loader):
            try:
                total += self._step(batch)
                n += 1
            except RuntimeError as e:
                self.errors.append(e)  # leak
                self.skipped += 1
                self.optimizer.zero_grad(set_to_none=True)
                continue
            if self.scheduler is not None:
                self.scheduler.step()
        return total / max(n, 1)
