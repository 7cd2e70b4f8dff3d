import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader


class RobustTrainer:
    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, max_retries: int = 2):
        self.model = model.cuda()
        self.optimizer = optimizer
        self.max_retries = max_retries
        self.failures: list[tuple[int, Exception]] = []

    def _run_batch(self, batch) -> float:
        x, y = (t.cuda(non_blocking=True) for t in batch)
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def train_epoch(self, loader: DataLoader) -> float:
        self.model.train()
        total, done = 0.0, 0
        for step, batch in enumerate(loader):
            for attempt in range(self.max_retries + 1):
                try:
                    total += self._run_batch(batch)
                    done += 1
                    break
                except RuntimeError as e:
                    if "out of memory" not in str(e):
                        raise
                    self.failures.append((step, e))  # leak
                    self.optimizer.zero_grad(set_to_none=True)
                    torch.cuda.empty_cache()
        return total / max(done, 1)

    def report(self) -> None:
        skipped = sorted({step for step, _ in self.failures})
        print(f"{len(self.failures)} OOM events on {len(skipped)} batches: {skipped[:20]}")
