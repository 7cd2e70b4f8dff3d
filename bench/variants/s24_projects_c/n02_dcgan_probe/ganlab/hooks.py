"""Forward hooks that summarise activations per layer.

Each hook overwrites a single slot per layer, so memory stays constant no matter
how many steps run; handles are kept so probes can be detached again.
"""
import logging
from typing import Dict, List

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


class ActivationProbe:
    """Records mean |activation| and the fraction of dead ReLU units per layer."""

    def __init__(self, layer_types=(nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
        self.layer_types = layer_types
        self.stats: Dict[str, Dict[str, float]] = {}
        self._handles: List[torch.utils.hooks.RemovableHandle] = []
        self.enabled = True

    def _make_hook(self, name: str):
        def hook(module, inputs, output):
            if not self.enabled:
                return
            with torch.no_grad():
                out = output.detach().float()
                self.stats[name] = {
                    "mean_abs": out.abs().mean().item(),
                    "dead_frac": (out <= 0).float().mean().item(),
                }
        return hook

    def attach(self, model: nn.Module, prefix: str = "") -> "ActivationProbe":
        for name, module in model.named_modules():
            if isinstance(module, self.layer_types):
                h = module.register_forward_hook(self._make_hook(f"{prefix}{name}"))
                self._handles.append(h)
        logger.debug("attached %d probes to %s", len(self._handles), type(model).__name__)
        return self

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def summary(self) -> str:
        worst = sorted(self.stats.items(), key=lambda kv: -kv[1]["dead_frac"])[:3]
        return ", ".join(f"{k}: dead={v['dead_frac']:.2f} |a|={v['mean_abs']:.3f}" for k, v in worst)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False
