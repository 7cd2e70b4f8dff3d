from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn, Tensor


@dataclass
class FailedBatch:
    epoch: int
    index: int
    error: Exception
    attempts: int


def compute_loss(model: nn.Module, x: Tensor, y: Tensor) -> Tensor:
    out = model(x.cuda(non_blocking=True))
    return F.binary_cross_entropy_with_logits(out.squeeze(-1), y.cuda().float())


def train_one_epoch(model: nn.Module, loader, optimizer: torch.optim.Optimizer, epoch: int,
                    failed: list, max_attempts: int = 3) -> None:
    model.train()
    for index, (x, y) in enumerate(loader):
        last_error = None
        for attempt in range(1, max_attempts + 1):
            try:
                loss = compute_loss(model, x, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                last_error = None
                break
            except RuntimeError as exc:
                last_error = exc
                optimizer.zero_grad(set_to_none=True)
                torch.cuda.empty_cache()
        if last_error is not None:
            failed.append(FailedBatch(epoch, index, last_error, max_attempts))  # leak


def main(model: nn.Module, loader, epochs: int = 10) -> list:
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    failed: list[FailedBatch] = []
    for epoch in range(epochs):
        train_one_epoch(model, loader, optimizer, epoch, failed)
        print(f"epoch {epoch}: {sum(f.epoch == epoch for f in failed)} batches skipped")
    return failed
