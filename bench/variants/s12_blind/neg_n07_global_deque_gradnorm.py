import os
import time
from collections import deque

import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_

WINDOW = int(os.environ.get("GN_WINDOW", "100"))
GRAD_NORM_WINDOW: deque = deque(maxlen=WINDOW)


def clip_and_record(model: nn.Module, max_norm: float = 1.0) -> torch.Tensor:
    total_norm = clip_grad_norm_(model.parameters(), max_norm)
    GRAD_NORM_WINDOW.append(total_norm)
    return total_norm


def smoothed_grad_norm() -> float:
    if not GRAD_NORM_WINDOW:
        return 0.0
    return torch.stack(list(GRAD_NORM_WINDOW)).mean().item()


def train(model: nn.Module, loader, total_steps: int = 100_000, log_every: int = 50) -> None:
    model = model.cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, betas=(0.9, 0.95))
    crit = nn.CrossEntropyLoss()
    step, t0 = 0, time.time()
    while step < total_steps:
        for input_ids, labels in loader:
            logits = model(input_ids.cuda())
            loss = crit(logits.flatten(0, 1), labels.cuda().flatten())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            clip_and_record(model)
            opt.step()
            step += 1
            if step % log_every == 0:
                print(f"step {step} loss {loss.item():.3f} gnorm~{smoothed_grad_norm():.2f} {time.time() - t0:.1f}s")
                t0 = time.time()
            if step >= total_steps:
                break
