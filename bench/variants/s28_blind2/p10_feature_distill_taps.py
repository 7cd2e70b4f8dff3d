"""Logit + hidden-state distillation of a large causal LM into a smaller student.

Student features are read from forward hooks on selected decoder layers and
regressed (through a learned projection) onto the teacher's hidden states.
"""
import logging
from typing import Dict, List, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import Trainer

logger = logging.getLogger(__name__)


class FeatureTap:
    """Forward hook that exposes the output of one decoder layer."""

    captured: Dict[str, List[torch.Tensor]] = {}

    def __init__(self, name: str, module: nn.Module):
        self.name = name
        FeatureTap.captured.setdefault(name, [])
        self.handle = module.register_forward_hook(self._hook)

    def _hook(self, module, inputs, output):
        hidden = output[0] if isinstance(output, tuple) else output
        FeatureTap.captured[self.name].append(hidden)  # leak

    def latest(self) -> torch.Tensor:
        return FeatureTap.captured[self.name][-1]

    def remove(self) -> None:
        self.handle.remove()


class DistillationTrainer(Trainer):
    def __init__(self, *args, teacher=None, layer_map: Dict[int, int] = None,
                 temperature: float = 2.0, alpha_kd: float = 0.5, beta_feat: float = 1.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.teacher = teacher.eval()
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.layer_map = layer_map or {}
        self.temperature = temperature
        self.alpha_kd = alpha_kd
        self.beta_feat = beta_feat
        layers = self.model.model.layers
        self.taps = {s: FeatureTap(f"student.{s}", layers[s]) for s in self.layer_map}
        d_s = self.model.config.hidden_size
        d_t = self.teacher.config.hidden_size
        self.projections = nn.ModuleDict(
            {str(s): nn.Linear(d_s, d_t, bias=False) for s in self.layer_map}
        ).to(self.args.device)

    def create_optimizer(self):
        optimizer = super().create_optimizer()
        optimizer.add_param_group({"params": self.projections.parameters(), "weight_decay": 0.0})
        return optimizer

    def _feature_loss(self, teacher_hidden: Sequence[torch.Tensor], mask: torch.Tensor):
        losses = []
        for s_idx, t_idx in self.layer_map.items():
            student_h = self.projections[str(s_idx)](self.taps[s_idx].latest())
            target = teacher_hidden[t_idx + 1]
            per_tok = F.mse_loss(student_h.float(), target.float(), reduction="none").mean(-1)
            losses.append((per_tok * mask).sum() / mask.sum().clamp(min=1))
        return torch.stack(losses).mean()

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        outputs = model(**inputs)
        with torch.no_grad():
            t_out = self.teacher(
                input_ids=inputs["input_ids"],
                attention_mask=inputs["attention_mask"],
                output_hidden_states=True,
            )
        T = self.temperature
        kd = F.kl_div(
            F.log_softmax(outputs.logits.float() / T, dim=-1),
            F.softmax(t_out.logits.float() / T, dim=-1),
            reduction="batchmean",
        ) * (T * T)
        mask = inputs["attention_mask"].float()
        feat = self._feature_loss(t_out.hidden_states, mask)
        loss = (1 - self.alpha_kd) * outputs.loss + self.alpha_kd * kd + self.beta_feat * feat
        if self.state.global_step % self.args.logging_steps == 0:
            logger.debug("ce=%.4f kd=%.4f feat=%.4f", outputs.loss.item(), kd.item(), feat.item())
        return (loss, outputs) if return_outputs else loss
