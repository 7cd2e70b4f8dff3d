"""Expert-utilisation monitoring for Mixture-of-Experts fine-tuning.

Add to a ``transformers.Trainer``::

    trainer.add_callback(RouterStatsCallback(top_k=2))

Works with Mixtral / Qwen-MoE / Switch style blocks, anything exposing a
``gate`` (or ``router``) ``nn.Linear`` that maps hidden states to expert logits.
"""
from __future__ import annotations

import logging
import math
from typing import Dict, List, Optional

import torch
from torch import nn
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

logger = logging.getLogger(__name__)

_GATE_NAMES = ("gate", "router", "router.classifier")


def find_router_modules(model: nn.Module) -> Dict[str, nn.Module]:
    found = {}
    for name, module in model.named_modules():
        leaf = name.rsplit(".", 1)[-1]
        if leaf in _GATE_NAMES and isinstance(module, nn.Linear):
            found[name] = module
    return found


def _layer_index(name: str) -> int:
    for part in name.split("."):
        if part.isdigit():
            return int(part)
    return -1


class RouterStatsCallback(TrainerCallback):
    """Logs load-balance statistics of every router.

    For each MoE layer we report the coefficient of variation of the token
    share per expert and the fraction of "dead" experts (share < 1/(10 E)).
    """

    def __init__(self, top_k: int = 2, log_per_layer: bool = False):
        self.top_k = top_k
        self.log_per_layer = log_per_layer
        self._handles = []
        self._router_logits: Dict[str, List[torch.Tensor]] = {}
        self._num_experts: Dict[str, int] = {}

    # ------------------------------------------------------------------ hooks
    def _make_hook(self, name: str):
        bucket = self._router_logits.setdefault(name, [])

        def hook(module, inputs, output):
            if not module.training:
                return
            logits = output[0] if isinstance(output, tuple) else output
            bucket.append(logits.reshape(-1, logits.shape[-1]))  # leak

        return hook

    def on_train_begin(self, args: TrainingArguments, state: TrainerState,
                       control: TrainerControl, model: Optional[nn.Module] = None, **kwargs):
        if model is None:
            return
        routers = find_router_modules(model)
        if not routers:
            logger.warning("RouterStatsCallback: no router modules found, callback inactive")
            return
        for name, module in routers.items():
            self._num_experts[name] = module.out_features
            self._handles.append(module.register_forward_hook(self._make_hook(name)))
        logger.info("RouterStatsCallback: watching %d routers", len(routers))

    def on_train_end(self, args, state, control, **kwargs):
        for h in self._handles:
            h.remove()
        self._handles = []

    # ---------------------------------------------------------------- metrics
    def _layer_stats(self, name: str) -> Optional[Dict[str, float]]:
        chunks = self._router_logits.get(name)
        if not chunks:
            return None
        n_exp = self._num_experts[name]
        logits = torch.cat(chunks, dim=0)
        top = logits.topk(self.top_k, dim=-1).indices.flatten()
        share = torch.bincount(top, minlength=n_exp).float()
        share = share / share.sum().clamp_min(1.0)
        mean = share.mean()
        cv = (share.std() / mean).item() if mean > 0 else math.nan
        dead = (share < 1.0 / (10 * n_exp)).float().mean().item()
        return {"cv": cv, "dead_frac": dead}

    def on_log(self, args, state: TrainerState, control, logs=None, **kwargs):
        if logs is None or not self._num_experts:
            return
        cvs, deads = [], []
        for name in sorted(self._num_experts, key=_layer_index):
            st = self._layer_stats(name)
            if st is None:
                continue
            cvs.append(st["cv"])
            deads.append(st["dead_frac"])
            if self.log_per_layer:
                idx = _layer_index(name)
                logs[f"router/{idx}/cv"] = round(st["cv"], 4)
                logs[f"router/{idx}/dead"] = round(st["dead_frac"], 4)
        if cvs:
            logs["router/cv_mean"] = round(sum(cvs) / len(cvs), 4)
            logs["router/dead_frac_mean"] = round(sum(deads) / len(deads), 4)
