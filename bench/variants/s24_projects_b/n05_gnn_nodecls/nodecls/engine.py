"""Single optimisation / evaluation steps, shared by train.py and the sweep script."""
from __future__ import annotations

from typing import Dict

import torch
import torch.nn.functional as F


def move(batch: Dict[str, torch.Tensor], device) -> Dict[str, torch.Tensor]:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def train_step(model, optimizer, batch: Dict[str, torch.Tensor], clip: float = 0.0
               ) -> Dict[str, torch.Tensor]:
    """One update on a sampled subgraph; returns detached scalars."""
    model.train()
    logits = model(batch["x"], batch["edge_index"], batch["hops"])
    n_seed = int(batch["n_seed"])
    loss = F.cross_entropy(logits[:n_seed], batch["y"])
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    acc = (logits[:n_seed].argmax(-1) == batch["y"]).float().mean()
    return {"loss": loss.detach(), "acc": acc.detach()}


@torch.no_grad()
def eval_step(model, batch: Dict[str, torch.Tensor]) -> Dict[str, float]:
    model.eval()
    logits = model(batch["x"], batch["edge_index"], batch["hops"])
    n_seed = int(batch["n_seed"])
    correct = (logits[:n_seed].argmax(-1) == batch["y"]).sum().item()
    return {"correct": correct, "total": n_seed}


def save_checkpoint(path: str, model, optimizer, epoch: int, best_val: float) -> None:
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "epoch": epoch, "best_val": best_val}, path)


def load_checkpoint(path: str, model, optimizer=None, map_location="cpu") -> Dict:
    state = torch.load(path, map_location=map_location)
    model.load_state_dict(state["model"])
    if optimizer is not None and "optimizer" in state:
        optimizer.load_state_dict(state["optimizer"])
    return {"epoch": state.get("epoch", 0), "best_val": state.get("best_val", 0.0)}
