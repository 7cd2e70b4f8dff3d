"""Activation-checkpointing helpers.

* :func:`apply_activation_checkpointing` wraps every sub-module selected by a
  predicate so that its forward runs under :func:`torch.utils.checkpoint.checkpoint`.
* :func:`compare_checkpointing` runs a few optimisation steps with and without
  checkpointing and reports peak memory, throughput and the mean objective so
  users can pick a policy before launching a long job.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import logging
import time
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, Tuple

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

_log = logging.getLogger(__name__)


class _CheckpointWrapper(nn.Module):
    def __init__(self, inner: nn.Module, use_reentrant: bool = False) -> None:
        super().__init__()
        self.inner = inner
        self._use_reentrant = use_reentrant

    def forward(self, *args, **kwargs):
        if not self.training or not torch.is_grad_enabled():
            return self.inner(*args, **kwargs)
        return checkpoint(self.inner, *args, use_reentrant=self._use_reentrant, **kwargs)


def apply_activation_checkpointing(model: nn.Module, predicate: Callable[[str, nn.Module], bool],
                                   use_reentrant: bool = False) -> int:
    """Replace matching children in-place; returns the number of wrapped modules."""
    wrapped = 0
    for parent_name, parent in list(model.named_modules()):
        for child_name, child in list(parent.named_children()):
            full = f"{parent_name}.{child_name}" if parent_name else child_name
            if isinstance(child, _CheckpointWrapper) or not predicate(full, child):
                continue
            setattr(parent, child_name, _CheckpointWrapper(child, use_reentrant))
            wrapped += 1
    return wrapped


@dataclass
class _StepResult:
    objective: torch.Tensor
    seconds: float


@contextlib.contextmanager
def _peak_memory(device: torch.device) -> Iterator[Dict[str, int]]:
    out = {"peak": 0}
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    yield out
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        out["peak"] = torch.cuda.max_memory_allocated(device)


def _one_step(model: nn.Module, opt: torch.optim.Optimizer, batch: Tuple[torch.Tensor, torch.Tensor]) -> _StepResult:
    t0 = time.perf_counter()
    x, y = batch
    objective = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    objective.backward()
    opt.step()
    return _StepResult(objective=objective, seconds=time.perf_counter() - t0)


def _measure(model: nn.Module, make_batch: Callable[[], Tuple[torch.Tensor, torch.Tensor]],
             steps: int, device: torch.device) -> Dict[str, float]:
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    model.train()
    cum_obj = torch.zeros((), device=device)
    elapsed = 0.0
    with _peak_memory(device) as mem:
        for _ in range(steps):
            result = _one_step(model, opt, make_batch())
            cum_obj = cum_obj + result.objective  # leak
            elapsed += result.seconds
    return {
        "peak_mib": mem["peak"] / 2**20,
        "step_ms": 1000 * elapsed / steps,
        "mean_objective": (cum_obj / steps).item(),
    }


def compare_checkpointing(model: nn.Module, make_batch, predicate, steps: int = 20) -> Dict[str, Dict[str, float]]:
    device = next(model.parameters()).device
    baseline = _measure(copy.deepcopy(model), make_batch, steps, device)
    ckpt_model = copy.deepcopy(model)
    n = apply_activation_checkpointing(ckpt_model, predicate)
    _log.info("wrapped %d modules", n)
    checkpointed = _measure(ckpt_model, make_batch, steps, device)
    return {"baseline": baseline, "checkpointed": checkpointed}


class _ResidualMLP(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.ff = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.ff(x)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--depth", type=int, default=24)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=200)
    args = p.parse_args()

    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = nn.Sequential(*[_ResidualMLP(args.width) for _ in range(args.depth)], nn.Linear(args.width, 10)).to(dev)

    def make_batch():
        return torch.randn(args.batch, 256, args.width, device=dev), torch.randint(0, 10, (args.batch, 256), device=dev).view(-1)

    report = compare_checkpointing(
        nn.Sequential(net, nn.Flatten(0, 1)), make_batch,
        predicate=lambda name, m: isinstance(m, _ResidualMLP), steps=args.steps,
    )
    for k, v in report.items():
        _log.info("%-12s %s", k, v)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
