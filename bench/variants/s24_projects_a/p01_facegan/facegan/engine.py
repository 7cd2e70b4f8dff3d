"""One optimisation step of the non-saturating GAN objective."""
import logging
from typing import Dict

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger(__name__)


def d_loss_fn(real_logits: torch.Tensor, fake_logits: torch.Tensor,
              label_smoothing: float = 0.0) -> torch.Tensor:
    real_targets = torch.full_like(real_logits, 1.0 - label_smoothing)
    fake_targets = torch.zeros_like(fake_logits)
    loss_real = F.binary_cross_entropy_with_logits(real_logits, real_targets)
    loss_fake = F.binary_cross_entropy_with_logits(fake_logits, fake_targets)
    return loss_real + loss_fake


def g_loss_fn(fake_logits: torch.Tensor) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(fake_logits, torch.ones_like(fake_logits))


def train_step(real: torch.Tensor, netG: nn.Module, netD: nn.Module,
               optG: torch.optim.Optimizer, optD: torch.optim.Optimizer,
               label_smoothing: float = 0.1, n_critic: int = 1) -> Dict[str, torch.Tensor]:
    """Run one discriminator update (or ``n_critic`` of them) and one generator update.

    Returns the individual loss terms so the caller can aggregate / log them.
    """
    bsz = real.size(0)
    device = real.device

    for _ in range(n_critic):
        optD.zero_grad(set_to_none=True)
        z = netG.sample_noise(bsz, device)
        fake = netG(z)
        real_logits = netD(real)
        fake_logits = netD(fake.detach())
        loss_d = d_loss_fn(real_logits, fake_logits, label_smoothing)
        loss_d.backward()
        optD.step()

    optG.zero_grad(set_to_none=True)
    fake_logits = netD(fake)
    loss_g = g_loss_fn(fake_logits)
    loss_g.backward()
    optG.step()

    return {
        "loss_d": loss_d,
        "loss_g": loss_g,
        "d_x": torch.sigmoid(real_logits).mean(),
        "d_g_z": torch.sigmoid(fake_logits).mean(),
    }


@torch.no_grad()
def sample_grid(netG: nn.Module, fixed_noise: torch.Tensor) -> torch.Tensor:
    was_training = netG.training
    netG.eval()
    imgs = netG(fixed_noise).cpu()
    netG.train(was_training)
    return imgs
