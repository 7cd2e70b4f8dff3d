"""Teacher/student pair with feature hooks registered on matching stages."""
from __future__ import annotations

import logging
from typing import List, Sequence, Tuple

import torch
import torch.nn as nn
import torchvision

from .hooks import FeatureStore

logger = logging.getLogger(__name__)


def resnet(arch: str, num_classes: int) -> nn.Module:
    net = getattr(torchvision.models, arch)(weights=None, num_classes=num_classes)
    # CIFAR stem: 3x3 conv, no max-pool
    net.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    net.maxpool = nn.Identity()
    return net


class TeacherStudent(nn.Module):
    def __init__(self, teacher: nn.Module, student: nn.Module,
                 stages: Sequence[str] = ("layer1", "layer2", "layer3", "layer4")):
        super().__init__()
        self.teacher = teacher
        self.student = student
        self.stages = list(stages)
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.t_store = FeatureStore(detach=True).attach(self.teacher, self.stages)
        self.s_store = FeatureStore().attach(self.student, self.stages)

    def train(self, mode: bool = True):
        super().train(mode)
        self.teacher.eval()
        return self

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor,
                                                List[torch.Tensor], List[torch.Tensor]]:
        with torch.no_grad():
            t_logits = self.teacher(x)
        s_logits = self.student(x)
        return (s_logits, t_logits, self.s_store.get(self.stages),
                self.t_store.get(self.stages))

    def release(self) -> None:
        """Drop the hooks, e.g. before exporting the student."""
        self.t_store.remove()
        self.s_store.remove()


def build(teacher_arch: str, student_arch: str, num_classes: int,
          teacher_ckpt: str = "") -> TeacherStudent:
    teacher = resnet(teacher_arch, num_classes)
    if teacher_ckpt:
        teacher.load_state_dict(torch.load(teacher_ckpt, map_location="cpu"))
        logger.info("teacher weights: %s", teacher_ckpt)
    return TeacherStudent(teacher, resnet(student_arch, num_classes))
