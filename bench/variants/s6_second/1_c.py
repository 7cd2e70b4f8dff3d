from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn, Tensor


@dataclass
class StepOutput:
    step: int
    loss: float
    mae: Tensor
    grad_norm: float


@dataclass
class TrainState:
    step: int = 0
    history: list = field(default_factory=list)


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, batch, max_norm: float = 1.0):
    x, y = batch
    pred = model(x)
    loss = F.smooth_l1_loss(pred, y)
    mae = F.l1_loss(pred, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm).item()
    optimizer.step()
    return loss.item(), mae, grad_norm


def train(model: nn.Module, optimizer: torch.optim.Optimizer, loader, epochs: int,
          log_every: int = 50) -> TrainState:
    state = TrainState()
    model.train()
    for epoch in range(epochs):
        for batch in loader:
            loss, mae, grad_norm = train_step(model, optimizer, batch)
            state.step += 1
            if state.step % log_every == 0:
                state.history.append(StepOutput(state.step, loss, mae, grad_norm))  # leak
                print(f"epoch {epoch} step {state.step} loss {loss:.4f} gnorm {grad_norm:.2f}")
    return state
