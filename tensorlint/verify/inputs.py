"""Inputs for a module's forward: a spec such as `float32[8,512]`, or inferred from its first layer.

Inference never guesses past what the first layer says; a candidate is tried on a deep copy
(side effects such as `self.cache.append` must not touch the measured model), and when none
works the target is inconclusive and the user gives `inputs` in a spec.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import torch
from torch import nn

BATCH = 8
_SPEC = re.compile(r"^\s*(?P<dtype>[a-z]+[0-9]*)\s*\[(?P<dims>[0-9,\s]*)\]\s*$")


class NeedsSpec(Exception):
    """The target cannot be driven without a spec; the message says what to give."""


def parse(spec: str, device: str) -> torch.Tensor:
    match = _SPEC.match(spec)
    if match is None:
        raise NeedsSpec(f"cannot read input spec {spec!r}: write e.g. float32[8,512]")
    dtype = getattr(torch, match["dtype"], None)
    if not isinstance(dtype, torch.dtype):
        raise NeedsSpec(f"unknown dtype {match['dtype']!r} in input spec {spec!r}")
    shape = [int(d) for d in match["dims"].split(",") if d.strip()]
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype, device=device)
    return torch.randint(0, 2, shape, dtype=dtype, device=device)


def candidates(model: nn.Module, device: str) -> list[torch.Tensor]:
    """Inputs that the first layer with a known input size accepts."""
    for layer in model.modules():
        if isinstance(layer, nn.Linear):
            return [torch.randn(BATCH, layer.in_features, device=device)]
        if isinstance(layer, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            spatial = {nn.Conv1d: [64], nn.Conv2d: [32, 32], nn.Conv3d: [16, 16, 16]}[type(layer)]
            return [torch.randn(BATCH, layer.in_channels, *spatial, device=device)]
        if isinstance(layer, nn.Embedding):
            return [torch.randint(0, layer.num_embeddings, (BATCH, 16), device=device)]
        if isinstance(layer, (nn.LSTM, nn.GRU, nn.RNN)):
            shape = (BATCH, 16) if layer.batch_first else (16, BATCH)
            return [torch.randn(*shape, layer.input_size, device=device)]
        if isinstance(layer, nn.LayerNorm):
            return [torch.randn(BATCH, 16, *layer.normalized_shape, device=device)]
    return []


def infer(model: nn.Module, device: str) -> tuple[torch.Tensor, ...]:
    for candidate in candidates(model, device):
        try:
            with torch.no_grad():
                copy.deepcopy(model)(candidate)
        except Exception as error:
            raise NeedsSpec(
                f"needs a spec: forward rejected the input inferred from the first layer "
                f"({_describe(candidate)}: {type(error).__name__}); give `inputs`"
            ) from error
        return (candidate,)
    raise NeedsSpec("needs a spec: no first layer tells the input shape; give `inputs`, e.g. float32[8,512]")


def _describe(tensor: torch.Tensor) -> str:
    return f"{str(tensor.dtype).removeprefix('torch.')}{list(tensor.shape)}"


def build(model: nn.Module, specs: list[str] | None, device: str) -> tuple[Any, ...]:
    if specs:
        return tuple(parse(s, device) for s in specs)
    return infer(model, device)
