"""Forward/backward logic for one CycleGAN iteration."""
from typing import Dict

import torch
import torch.nn as nn

from .utils import set_requires_grad

mse = nn.MSELoss()
l1 = nn.L1Loss()


def gan_loss(pred: torch.Tensor, is_real: bool) -> torch.Tensor:
    target = torch.ones_like(pred) if is_real else torch.zeros_like(pred)
    return mse(pred, target)


def train_step(real_a, real_b, nets: dict, opts: dict, pools: dict,
               lambda_cyc: float = 10.0, lambda_idt: float = 0.5) -> Dict[str, float]:
    G_ab, G_ba, D_a, D_b = nets["G_ab"], nets["G_ba"], nets["D_a"], nets["D_b"]

    # ---- generators ----
    set_requires_grad([D_a, D_b], False)
    opts["G"].zero_grad(set_to_none=True)
    fake_b = G_ab(real_a)
    fake_a = G_ba(real_b)
    rec_a = G_ba(fake_b)
    rec_b = G_ab(fake_a)
    loss_idt = (l1(G_ab(real_b), real_b) + l1(G_ba(real_a), real_a)) * lambda_cyc * lambda_idt
    loss_gan = gan_loss(D_b(fake_b), True) + gan_loss(D_a(fake_a), True)
    loss_cyc = (l1(rec_a, real_a) + l1(rec_b, real_b)) * lambda_cyc
    loss_g = loss_gan + loss_cyc + loss_idt
    loss_g.backward()
    opts["G"].step()

    # ---- discriminators ----
    set_requires_grad([D_a, D_b], True)
    opts["D"].zero_grad(set_to_none=True)
    fake_b_hist = pools["b"].query(fake_b)
    fake_a_hist = pools["a"].query(fake_a)
    loss_d_b = 0.5 * (gan_loss(D_b(real_b), True) + gan_loss(D_b(fake_b_hist), False))
    loss_d_a = 0.5 * (gan_loss(D_a(real_a), True) + gan_loss(D_a(fake_a_hist), False))
    (loss_d_a + loss_d_b).backward()
    opts["D"].step()

    losses = {"G_gan": loss_gan, "G_cyc": loss_cyc, "G_idt": loss_idt,
              "D_a": loss_d_a, "D_b": loss_d_b}
    return {k: v.item() for k, v in losses.items()}
