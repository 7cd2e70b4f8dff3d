"""Lightning callback that tracks per-layer gradient norms and warns on spikes."""
from collections import defaultdict, deque
from typing import Deque, Dict, Optional

import torch
import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback
from pytorch_lightning.utilities import rank_zero_warn


def _layer_grad_norms(module: torch.nn.Module, norm_type: float = 2.0) -> Dict[str, torch.Tensor]:
    norms = {}
    for name, p in module.named_parameters():
        if p.grad is None:
            continue
        top = name.split(".")[0]
        g = p.grad.detach().norm(norm_type)
        norms[top] = norms.get(top, torch.zeros_like(g)) + g ** 2
    return {k: v.sqrt() for k, v in norms.items()}


class GradNormMonitor(Callback):
    """Logs gradient norms grouped by top-level submodule.

    Args:
        log_every_n_steps: how often to push values to the logger.
        spike_factor: warn when a group's norm exceeds ``spike_factor`` x its median.
        window: number of recent values kept per group for the median.
    """

    def __init__(self, log_every_n_steps: int = 50, spike_factor: float = 10.0,
                 norm_type: float = 2.0, window: int = 200):
        super().__init__()
        self.log_every_n_steps = log_every_n_steps
        self.spike_factor = spike_factor
        self.norm_type = norm_type
        self.history: Dict[str, Deque[float]] = defaultdict(lambda: deque(maxlen=window))
        self._last: Optional[Dict[str, float]] = None

    def on_after_backward(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule") -> None:
        if trainer.global_step % self.log_every_n_steps:
            return
        norms = {k: v.item() for k, v in _layer_grad_norms(pl_module, self.norm_type).items()}
        self._last = norms
        for group, value in norms.items():
            self.history[group].append(value)

    def _median(self, group: str) -> float:
        vals = sorted(self.history[group])
        return vals[len(vals) // 2] if vals else 0.0

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if self._last is None or trainer.global_step % self.log_every_n_steps:
            return
        metrics = {}
        for group, v in self._last.items():
            metrics[f"grad_norm/{group}"] = v
            med = self._median(group)
            if med > 0 and v > self.spike_factor * med:
                rank_zero_warn(f"grad norm spike in '{group}': {v:.3e} (median {med:.3e})")
        pl_module.log_dict(metrics, on_step=True, on_epoch=False)

    def state_dict(self):
        return {"log_every_n_steps": self.log_every_n_steps, "spike_factor": self.spike_factor}

    def load_state_dict(self, state_dict):
        self.log_every_n_steps = state_dict.get("log_every_n_steps", self.log_every_n_steps)
        self.spike_factor = state_dict.get("spike_factor", self.spike_factor)
