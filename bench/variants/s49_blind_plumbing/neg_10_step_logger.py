import csv

import torch
from torch.utils.data import DataLoader


class StepLogger:
    """Keeps loss and learning rate per optimisation step and writes them to CSV."""

    def __init__(self, log_every=50):
        self.log_every = log_every
        self.loss_by_step = {}
        self.lr_by_step = {}

    def log(self, step, loss, lr):
        self.loss_by_step[step] = loss.item()
        self.lr_by_step[step] = lr
        if step % self.log_every == 0:
            window = [self.loss_by_step[s] for s in range(max(0, step - self.log_every + 1), step + 1)
                      if s in self.loss_by_step]
            print(f"step {step:6d}  loss {sum(window) / len(window):.4f}  lr {lr:.2e}")

    def to_csv(self, path):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "loss", "lr"])
            for step in sorted(self.loss_by_step):
                w.writerow([step, float(self.loss_by_step[step]), self.lr_by_step[step]])


class Trainer:
    def __init__(self, model, optimizer, scheduler, device="cuda", grad_clip=1.0):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.device = device
        self.grad_clip = grad_clip
        self.logger = StepLogger()
        self.global_step = 0

    def train(self, loader: DataLoader, epochs):
        self.model.train()
        for _ in range(epochs):
            for batch in loader:
                batch = {k: v.to(self.device) for k, v in batch.items()}
                loss = self.model(**batch).loss
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
                self.optimizer.step()
                self.scheduler.step()
                self.optimizer.zero_grad(set_to_none=True)
                self.logger.log(self.global_step, loss, self.scheduler.get_last_lr()[0])
                self.global_step += 1
        self.logger.to_csv("train_log.csv")
