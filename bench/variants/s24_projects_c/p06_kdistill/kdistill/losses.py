"""Distillation objectives."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def kd_kl(student_logits: torch.Tensor, teacher_probs: torch.Tensor, temperature: float) -> torch.Tensor:
    """Hinton et al. KL term, scaled by T^2 so gradients keep their magnitude."""
    log_p = F.log_softmax(student_logits / temperature, dim=-1)
    return F.kl_div(log_p, teacher_probs, reduction="batchmean") * temperature ** 2


class FeatureHint(nn.Module):
    """FitNets-style hint: project student features to teacher width and regress."""

    def __init__(self, s_channels: int, t_channels: int):
        super().__init__()
        self.proj = nn.Sequential(
            nn.Conv2d(s_channels, t_channels, 1, bias=False),
            nn.BatchNorm2d(t_channels),
        )

    def forward(self, s_feat: torch.Tensor, t_feat: torch.Tensor) -> torch.Tensor:
        s = self.proj(s_feat)
        if s.shape[-2:] != t_feat.shape[-2:]:
            s = F.adaptive_avg_pool2d(s, t_feat.shape[-2:])
        return F.mse_loss(F.normalize(s.flatten(2), dim=-1), F.normalize(t_feat.flatten(2), dim=-1))


class DistillationLoss(nn.Module):
    def __init__(self, alpha: float = 0.9, temperature: float = 4.0, hint_weight: float = 0.0,
                 s_channels: int = 512, t_channels: int = 2048, label_smoothing: float = 0.1):
        super().__init__()
        self.alpha = alpha
        self.temperature = temperature
        self.hint_weight = hint_weight
        self.ce = nn.CrossEntropyLoss(label_smoothing=label_smoothing)
        self.hint = FeatureHint(s_channels, t_channels) if hint_weight > 0 else None

    def forward(self, s_logits, s_feat, t_probs, t_feat, labels):
        ce = self.ce(s_logits, labels)
        kd = kd_kl(s_logits, t_probs, self.temperature)
        total = (1 - self.alpha) * ce + self.alpha * kd
        parts = {"ce": ce.detach(), "kd": kd.detach()}
        if self.hint is not None:
            h = self.hint(s_feat, t_feat)
            total = total + self.hint_weight * h
            parts["hint"] = h.detach()
        return total, parts
