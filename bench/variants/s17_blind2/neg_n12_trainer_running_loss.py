"""Language-model pretraining Trainer with a running-loss logging helper."""
import math
import time

import torch
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter


class LMTrainer:
    def __init__(self, model, loader, lr=6e-4, warmup=2000, max_steps=100_000,
                 grad_clip=1.0, log_every=100, device="cuda"):
        self.model = model.to(device)
        self.loader = loader
        self.device = device
        self.max_steps = max_steps
        self.grad_clip = grad_clip
        self.log_every = log_every
        decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
        no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
            lr=lr, betas=(0.9, 0.95), fused=True,
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(s, max_steps) / max_steps))
        )
        self.writer = SummaryWriter("runs/lm")
        self.step = 0
        self._reset_logs()

    def _reset_logs(self):
        self.running_loss = 0.0
        self.running_tokens = 0
        self._t0 = time.time()

    def _accumulate_logs(self, loss, n_tokens):
        self.running_loss += loss.item() * n_tokens
        self.running_tokens += n_tokens

    def _write_logs(self):
        avg = self.running_loss / max(self.running_tokens, 1)
        tok_s = self.running_tokens / (time.time() - self._t0)
        self.writer.add_scalar("train/loss", avg, self.step)
        self.writer.add_scalar("train/ppl", math.exp(min(avg, 20)), self.step)
        self.writer.add_scalar("train/tokens_per_s", tok_s, self.step)
        print(f"step {self.step} loss {avg:.4f} tok/s {tok_s:.0f}")

    def training_step(self, batch):
        input_ids = batch["input_ids"].to(self.device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = self.model(input_ids[:, :-1])
            loss = F.cross_entropy(logits.flatten(0, 1).float(), input_ids[:, 1:].flatten(), ignore_index=-100)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
        self.optimizer.step()
        self.scheduler.step()
        return loss, input_ids[:, 1:].numel()

    def fit(self):
        self.model.train()
        while self.step < self.max_steps:
            for batch in self.loader:
                loss, n_tokens = self.training_step(batch)
                self.step += 1
                self._accumulate_logs(loss, n_tokens)
                if self.step % self.log_every == 0:
                    self._write_logs()
                    self._reset_logs()
                if self.step >= self.max_steps:
                    break
        self.writer.close()
