"""Per-step training logic and EMA bookkeeping."""
import copy
import logging

import torch

from .sde import snr_weight

logger = logging.getLogger(__name__)


class EMA:
    """Exponential moving average of model parameters."""

    def __init__(self, model: torch.nn.Module, decay: float = 0.9999):
        self.decay = decay
        self.shadow = copy.deepcopy(model).eval()
        for p in self.shadow.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model: torch.nn.Module) -> None:
        for s, p in zip(self.shadow.parameters(), model.parameters()):
            s.mul_(self.decay).add_(p.detach(), alpha=1.0 - self.decay)
        for s, b in zip(self.shadow.buffers(), model.buffers()):
            s.copy_(b)

    def state_dict(self):
        return self.shadow.state_dict()


def dsm_loss(model, sde, x0: torch.Tensor, likelihood_weighting: bool = False):
    """Denoising score matching loss, averaged over the batch."""
    t = sde.sample_time(x0.shape[0], x0.device)
    z = torch.randn_like(x0)
    mean, std = sde.marginal_prob(x0, t)
    xt = mean + std[:, None, None, None] * z
    score = model(xt, t)
    per_elem = (score * std[:, None, None, None] + z) ** 2
    per_sample = per_elem.flatten(1).mean(dim=1)
    if likelihood_weighting:
        per_sample = per_sample * snr_weight(sde, t)
    return per_sample.mean(), per_sample


def train_step(model, sde, batch, optimizer, accelerator, ema=None, grad_clip: float = 1.0,
               likelihood_weighting: bool = False):
    """Run one optimisation step and return the losses for logging."""
    x0 = batch[0] if isinstance(batch, (list, tuple)) else batch
    x0 = x0 * 2.0 - 1.0
    model.train()
    loss, per_sample = dsm_loss(model, sde, x0, likelihood_weighting)
    optimizer.zero_grad(set_to_none=True)
    accelerator.backward(loss)
    if accelerator.sync_gradients and grad_clip > 0:
        grad_norm = accelerator.clip_grad_norm_(model.parameters(), grad_clip)
    else:
        grad_norm = torch.zeros((), device=loss.device)
    optimizer.step()
    if ema is not None and accelerator.sync_gradients:
        ema.update(accelerator.unwrap_model(model))
    return {
        "loss": loss,
        "loss_max": per_sample.max(),
        "grad_norm": grad_norm,
    }
