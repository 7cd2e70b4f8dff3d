import os
import time

import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_

GRAD_NORM_HISTORY = []
MAX_NORM = float(os.environ.get("MAX_GRAD_NORM", "1.0"))


def clip_and_record(model: nn.Module, max_norm: float = MAX_NORM) -> torch.Tensor:
    total_norm = clip_grad_norm_(model.parameters(), max_norm)
    GRAD_NORM_HISTORY.append(total_norm)  # leak
    return total_norm


def build_model(vocab: int = 32000, dim: int = 768) -> nn.Module:
    return nn.Sequential(
        nn.Embedding(vocab, dim),
        nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 12, batch_first=True), 4),
        nn.Linear(dim, vocab),
    )


def train(loader, total_steps: int = 100_000, log_every: int = 50) -> None:
    model = build_model().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, betas=(0.9, 0.95))
    crit = nn.CrossEntropyLoss()
    t0 = time.time()
    step = 0
    while step < total_steps:
        for input_ids, labels in loader:
            input_ids, labels = input_ids.cuda(), labels.cuda()
            logits = model(input_ids)
            loss = crit(logits.view(-1, logits.size(-1)), labels.view(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            norm = clip_and_record(model)
            opt.step()
            step += 1
            if step % log_every == 0:
                dt = time.time() - t0
                print(f"step {step} loss {loss.item():.3f} gnorm {norm.item():.2f} {dt:.1f}s")
                t0 = time.time()
            if step >= total_steps:
                break
