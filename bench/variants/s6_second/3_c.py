import functools
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn, Tensor


class ConsistencyRegularizer:
    def __init__(self, weight: float = 1.0, temperature: float = 1.0):
        self.weight = weight
        self.temperature = temperature
        self.targets_by_step: dict[int, Callable[[Tensor], Tensor]] = {}

    @staticmethod
    def _kl(student_logits: Tensor, teacher_logits: Tensor, t: float) -> Tensor:
        return F.kl_div((student_logits / t).log_softmax(-1), (teacher_logits / t).softmax(-1),
                        reduction="batchmean") * t * t

    def update(self, step: int, teacher_logits: Tensor) -> None:
        self.targets_by_step[step] = functools.partial(self._kl, teacher_logits=teacher_logits, t=self.temperature)  # leak

    def __call__(self, step: int, student_logits: Tensor) -> Tensor:
        return self.weight * self.targets_by_step[step](student_logits)


@torch.no_grad()
def ema_update(teacher: nn.Module, student: nn.Module, decay: float = 0.999) -> None:
    for t, s in zip(teacher.parameters(), student.parameters()):
        t.mul_(decay).add_(s.detach(), alpha=1 - decay)


def train(student: nn.Module, teacher: nn.Module, loader, optimizer: torch.optim.Optimizer,
          epochs: int, reg: ConsistencyRegularizer) -> None:
    step = 0
    for epoch in range(epochs):
        for (weak, strong), labels in loader:
            with torch.no_grad():
                reg.update(step, teacher(weak))
            logits = student(strong)
            loss = F.cross_entropy(logits, labels) + reg(step, logits)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            ema_update(teacher, student)
            step += 1
