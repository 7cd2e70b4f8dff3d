from collections import defaultdict
from typing import Iterator

import torch
from torch import nn, Tensor
from torch.utils.data import DataLoader

_ERRORS: dict[str, list[BaseException]] = defaultdict(list)


def batches(loader: DataLoader, device: torch.device) -> Iterator[dict[str, Tensor]]:
    for batch in loader:
        yield {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def fit(model: nn.Module, loader: DataLoader, optimizer: torch.optim.Optimizer, scheduler,
        device: torch.device, epochs: int, max_retries: int = 1) -> None:
    for epoch in range(epochs):
        model.train()
        for batch in batches(loader, device):
            retries = 0
            while True:
                try:
                    out = model(**batch)
                    out["loss"].backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    optimizer.step()
                    break
                except (RuntimeError, ValueError) as err:
                    _ERRORS[type(err).__name__].append(err)  # leak
                    retries += 1
                    if retries > max_retries:
                        break
                finally:
                    optimizer.zero_grad(set_to_none=True)
            scheduler.step()
        summary = {name: len(errs) for name, errs in _ERRORS.items()}
        print(f"epoch {epoch} error summary: {summary}")
