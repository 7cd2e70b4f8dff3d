import functools

import torch
import torch.nn.functional as F
from torch import nn, Tensor


def _masked_pool(module: nn.Module, inputs, output: Tensor, mask: Tensor, sink: dict) -> None:
    m = mask.unsqueeze(-1).to(output.dtype)
    sink["pooled"] = (output * m).sum(1) / m.sum(1).clamp_min(1.0)


class SentenceDistiller:
    def __init__(self, student: nn.Module, teacher: nn.Module, optimizer: torch.optim.Optimizer,
                 alpha: float = 0.5):
        self.student = student
        self.teacher = teacher.eval()
        self.optimizer = optimizer
        self.alpha = alpha

    def step(self, input_ids: Tensor, attention_mask: Tensor, labels: Tensor) -> float:
        sink: dict = {}
        hook = functools.partial(_masked_pool, mask=attention_mask, sink=sink)
        self.student.encoder.register_forward_hook(hook)  # leak
        logits = self.student(input_ids, attention_mask=attention_mask)
        with torch.no_grad():
            target = self.teacher(input_ids, attention_mask=attention_mask)
        loss = F.cross_entropy(logits, labels)
        loss = loss + self.alpha * F.mse_loss(sink["pooled"], target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


def fit(distiller: SentenceDistiller, loader, epochs: int, device: str = "cuda") -> None:
    for epoch in range(epochs):
        running = 0.0
        for i, batch in enumerate(loader):
            ids = batch["input_ids"].to(device)
            mask = batch["attention_mask"].to(device)
            labels = batch["labels"].to(device)
            running += distiller.step(ids, mask, labels)
        print(f"epoch {epoch}: loss {running / (i + 1):.4f}")
