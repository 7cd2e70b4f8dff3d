"""Student/teacher wrapper that exposes intermediate features via hooks."""
from __future__ import annotations

import logging
from typing import Dict, List, Sequence, Tuple

import torch
import torch.nn as nn
import torchvision

import kdistill.hooks as H

logger = logging.getLogger(__name__)

# torchvision ResNet stage names and their output widths
STUDENT_LAYERS = {"layer2": 128, "layer3": 256, "layer4": 512}
TEACHER_LAYERS = {"layer2": 512, "layer3": 1024, "layer4": 2048}


def build_backbone(arch: str, num_classes: int, pretrained: bool) -> nn.Module:
    weights = "DEFAULT" if pretrained else None
    net = getattr(torchvision.models, arch)(weights=weights)
    if net.fc.out_features != num_classes:
        net.fc = nn.Linear(net.fc.in_features, num_classes)
    return net


class Adapter(nn.Module):
    """1x1 conv projecting student channels onto teacher channels."""

    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.proj = nn.Sequential(
            nn.Conv2d(c_in, c_out, kernel_size=1, bias=False),
            nn.BatchNorm2d(c_out),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x)


class DistillWrapper(nn.Module):
    """Holds a trainable student, a frozen teacher and the feature adapters."""

    def __init__(self, student: nn.Module, teacher: nn.Module,
                 layers: Sequence[str] = ("layer2", "layer3", "layer4")):
        super().__init__()
        self.student = student
        self.teacher = teacher.eval()
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.layers = list(layers)
        self.adapters = nn.ModuleDict({
            name: Adapter(STUDENT_LAYERS[name], TEACHER_LAYERS[name]) for name in self.layers
        })
        self.student_taps: Dict[str, H.FeatureTap] = {}
        self.teacher_taps: Dict[str, H.FeatureTap] = {}
        self._handles: List = []
        self.attach_taps()

    def attach_taps(self) -> None:
        for name in self.layers:
            s_tap = H.FeatureTap(f"student.{name}")
            t_tap = H.FeatureTap(f"teacher.{name}", detach=True)
            self._handles.append(
                H.resolve_module(self.student, name).register_forward_hook(s_tap))
            self._handles.append(
                H.resolve_module(self.teacher, name).register_forward_hook(t_tap))
            self.student_taps[name] = s_tap
            self.teacher_taps[name] = t_tap
        logger.info("attached %d feature taps", len(self._handles))

    def train(self, mode: bool = True):
        super().train(mode)
        self.teacher.eval()  # BN statistics of the teacher stay frozen
        return self

    def forward(self, images: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor,
                                                     List[torch.Tensor], List[torch.Tensor]]:
        with torch.no_grad():
            t_logits = self.teacher(images)
        s_logits = self.student(images)
        s_feats = [self.adapters[n](self.student_taps[n].latest()) for n in self.layers]
        t_feats = [self.teacher_taps[n].latest() for n in self.layers]
        return s_logits, t_logits, s_feats, t_feats


def build_model(args) -> DistillWrapper:
    student = build_backbone(args.student, args.num_classes, pretrained=False)
    teacher = build_backbone(args.teacher, args.num_classes, pretrained=False)
    if args.teacher_ckpt:
        state = torch.load(args.teacher_ckpt, map_location="cpu")
        teacher.load_state_dict(state.get("model", state))
        logger.info("loaded teacher weights from %s", args.teacher_ckpt)
    return DistillWrapper(student, teacher)
