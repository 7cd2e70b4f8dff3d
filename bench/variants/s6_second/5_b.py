from typing import Any, Dict

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader


class Evaluator:
    def __init__(self, model: nn.Module, device: str = "cuda", max_attempts: int = 3):
        self.model = model
        self.device = device
        self.max_attempts = max_attempts
        self.error_traces: Dict[int, Any] = {}

    def _forward_batch(self, images, targets) -> tuple[float, int]:
        images, targets = images.to(self.device), targets.to(self.device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = self.model(images)
        loss = F.cross_entropy(logits.float(), targets, reduction="sum")
        return loss.item(), (logits.argmax(1) == targets).sum().item()

    @torch.no_grad()
    def run(self, loader: DataLoader) -> Dict[str, float]:
        self.model.eval()
        loss_sum, correct, seen = 0.0, 0, 0
        for idx, (images, targets) in enumerate(loader):
            attempt = 0
            while attempt < self.max_attempts:
                try:
                    batch_loss, batch_correct = self._forward_batch(images, targets)
                    loss_sum += batch_loss
                    correct += batch_correct
                    seen += targets.numel()
                    break
                except RuntimeError as err:
                    self.error_traces[idx] = err.__traceback__  # leak
                    attempt += 1
                    torch.cuda.empty_cache()
        return {"loss": loss_sum / max(seen, 1), "acc": correct / max(seen, 1)}
