"""Mixed-precision top-down pose estimation trainer with a NaN/Inf guard around each step."""
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F


class NonFiniteLossError(FloatingPointError):
    pass


class PoseTrainer:
    def __init__(self, model, loader, lr=1e-3, warn_every=10, device="cuda"):
        self.model = model.to(device)
        self.loader = loader
        self.device = device
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.scaler = torch.cuda.amp.GradScaler()
        self.warn_every = warn_every
        self.bad_steps = {}
        self.step = 0

    def compute_loss(self, batch):
        images = batch["image"].to(self.device, non_blocking=True)
        heatmaps = batch["heatmaps"].to(self.device, non_blocking=True)
        weights = batch["target_weight"].to(self.device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            pred = self.model(images)
            loss = F.mse_loss(pred * weights[..., None, None], heatmaps * weights[..., None, None])
        return loss

    def guarded_step(self, batch):
        try:
            loss = self.compute_loss(batch)
            if not torch.isfinite(loss):
                raise NonFiniteLossError(f"non-finite loss {loss.item()} at step {self.step}")
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            return loss.item()
        except NonFiniteLossError:
            self.bad_steps[self.step] = traceback.format_exc(limit=2)
            self.optimizer.zero_grad(set_to_none=True)
            if len(self.bad_steps) % self.warn_every == 0:
                print(f"warning: {len(self.bad_steps)} non-finite steps so far")
            return None

    def report_bad_steps(self):
        for step, tb_text in sorted(self.bad_steps.items()):
            print(f"--- step {step} ---")
            print(tb_text)

    def fit(self, epochs, log_every=50):
        self.model.train()
        for epoch in range(epochs):
            for batch in self.loader:
                loss = self.guarded_step(batch)
                self.step += 1
                if loss is not None and self.step % log_every == 0:
                    print(f"epoch {epoch} step {self.step} loss {loss:.6f} bad {len(self.bad_steps)}")
        self.report_bad_steps()
