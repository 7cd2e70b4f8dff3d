import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger(__name__)


class RobustTrainer:
    """Skips batches that OOM or produce non-finite losses instead of crashing."""

    def __init__(self, model, optimizer, device="cuda", max_failures=1000):
        self.model = model.to(device)
        self.opt = optimizer
        self.device = device
        self.max_failures = max_failures
        self.failures = []

    def _step(self, batch):
        x, y = (t.to(self.device) for t in batch)
        out = self.model(x)
        loss = F.cross_entropy(out, y)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"non-finite loss {loss}")
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return loss.item()

    def train_epoch(self, loader):
        self.model.train()
        total, n = 0.0, 0
        for i, batch in enumerate(loader):
            try:
                total += self._step(batch)
                n += 1
            except (RuntimeError, FloatingPointError) as err:
                self.failures.append(err)  # leak
                log.warning("batch %d failed: %s", i, err)
                self.opt.zero_grad(set_to_none=True)
                if len(self.failures) > self.max_failures:
                    raise
        return total / max(n, 1)


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 10))
    opt = torch.optim.Adam(net.parameters())
    trainer = RobustTrainer(net, opt)
    data = [(torch.randn(256, 512), torch.randint(0, 10, (256,))) for _ in range(100)]
    for ep in range(5):
        print(ep, trainer.train_epoch(data), len(trainer.failures))
