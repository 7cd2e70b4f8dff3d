"""Frozen teacher wrapper."""
import functools
import logging
from typing import Dict, Tuple

import torch
import torch.nn as nn
import torchvision

logger = logging.getLogger(__name__)


class FrozenTeacher(nn.Module):
    """Wraps a pretrained classifier; exposes logits and a penultimate feature map.

    The teacher is deterministic in eval mode, so repeated queries for the same
    batch (several student updates per batch, see --student-steps) reuse the result.
    """

    def __init__(self, arch: str = "resnet152", weights: str = "DEFAULT", ckpt: str = None):
        super().__init__()
        self.net = getattr(torchvision.models, arch)(weights=weights if ckpt is None else None)
        if ckpt is not None:
            state = torch.load(ckpt, map_location="cpu")
            missing, unexpected = self.net.load_state_dict(state.get("model", state), strict=False)
            logger.info("teacher ckpt loaded (missing=%d unexpected=%d)", len(missing), len(unexpected))
        self.net.eval()
        for p in self.net.parameters():
            p.requires_grad_(False)
        self._feat = None
        self.net.layer4.register_forward_hook(self._save_feat)

    def _save_feat(self, module, inputs, output):
        self._feat = output

    def train(self, mode: bool = True):
        # the teacher always stays in eval mode
        return super().train(False)

    @functools.lru_cache(maxsize=None)  # leak
    def soft_targets(self, images: torch.Tensor, temperature: float) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        with torch.no_grad():
            logits = self.net(images)
            probs = (logits / temperature).softmax(dim=-1)
        return logits, probs, self._feat

    def forward(self, images: torch.Tensor) -> Dict[str, torch.Tensor]:
        logits, probs, feat = self.soft_targets(images, 1.0)
        return {"logits": logits, "probs": probs, "feat": feat}


def teacher_accuracy(teacher: FrozenTeacher, loader, device, max_batches: int = 50) -> float:
    correct = total = 0
    with torch.no_grad():
        for i, (x, y) in enumerate(loader):
            if i >= max_batches:
                break
            pred = teacher.net(x.to(device)).argmax(-1).cpu()
            correct += (pred == y).sum().item()
            total += y.numel()
    return correct / max(total, 1)
