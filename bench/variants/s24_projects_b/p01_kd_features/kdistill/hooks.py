"""Forward-hook helpers used to tap intermediate activations.

The distillation objective matches a handful of student feature maps against
the corresponding teacher feature maps. Rather than rewriting the backbone
``forward`` methods (torchvision models do not expose intermediate outputs),
we attach hooks and read the captured tensors back after each forward pass.
"""
from __future__ import annotations

import logging
from typing import List, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class FeatureTap:
    """Callable forward hook that records a module's output.

    One instance is registered per tapped layer. :meth:`latest` returns the
    activation produced by the most recent forward pass, which is what the
    feature-matching loss consumes.
    """

    def __init__(self, name: str, detach: bool = False):
        self.name = name
        self.detach = detach
        self.outputs: List[torch.Tensor] = []
        self.calls = 0

    def __call__(self, module: nn.Module, inputs, output):
        if isinstance(output, (tuple, list)):
            output = output[0]
        if self.detach:
            output = output.detach()
        self.outputs.append(output)  # leak
        self.calls += 1

    def latest(self) -> torch.Tensor:
        if not self.outputs:
            raise RuntimeError(f"tap {self.name!r} has not fired yet")
        return self.outputs[-1]

    def __repr__(self) -> str:
        return f"FeatureTap(name={self.name!r}, calls={self.calls})"


def resolve_module(root: nn.Module, dotted: str) -> nn.Module:
    """Return the sub-module addressed by a dotted path such as ``layer3.1``."""
    mod = root
    for part in dotted.split("."):
        if part.isdigit():
            mod = mod[int(part)]
        else:
            mod = getattr(mod, part)
    return mod


def spatial_match(student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
    """Resize a student feature map to the teacher's spatial resolution."""
    if student.shape[-2:] != teacher.shape[-2:]:
        student = F.interpolate(student, size=teacher.shape[-2:], mode="bilinear",
                                align_corners=False)
    return student


def feature_loss(student_feats: Sequence[torch.Tensor],
                 teacher_feats: Sequence[torch.Tensor],
                 weights: Sequence[float] | None = None) -> torch.Tensor:
    """Weighted sum of normalised MSE between matched feature maps."""
    if weights is None:
        weights = [1.0] * len(student_feats)
    total = student_feats[0].new_zeros(())
    for w, s, t in zip(weights, student_feats, teacher_feats):
        s = spatial_match(s, t)
        s = F.normalize(s.flatten(1), dim=1)
        t = F.normalize(t.flatten(1), dim=1)
        total = total + w * F.mse_loss(s, t)
    return total
