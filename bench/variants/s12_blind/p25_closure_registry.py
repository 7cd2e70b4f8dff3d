import logging
from typing import Callable

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)

# End-of-run reporters, executed by the launcher after training finishes.
_REPORTERS: list[Callable[[], str]] = []


def run_reporters() -> None:
    for fn in _REPORTERS:
        logger.info(fn())


def train_step(model: nn.Module, batch, optimizer, step: int) -> float:
    inputs, targets = batch
    preds = model(inputs.cuda())
    loss = nn.functional.mse_loss(preds, targets.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    if step % 1000 == 0:
        def _report(step=step) -> str:
            return f"checkpoint@{step}: loss={loss.item():.5f} pred_std={preds.std().item():.3f}"
        _REPORTERS.append(_report)  # leak
    return loss.item()


def main(model: nn.Module, loader, epochs: int = 100) -> None:
    model = model.cuda()
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-4)
    step = 0
    for _ in range(epochs):
        for batch in loader:
            train_step(model, batch, optimizer, step)
            step += 1
    run_reporters()
