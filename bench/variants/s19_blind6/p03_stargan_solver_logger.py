"""Solver for multi-domain image-to-image translation (StarGAN-style).

The generator/discriminator updates live in `Solver`; scalar bookkeeping goes through
`Logger`, which mirrors everything to TensorBoard.
"""
import os
import time
import datetime
from dataclasses import dataclass, fields

import torch
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter

from model import Generator, Discriminator


@dataclass
class StepOutputs:
    d_real: torch.Tensor
    d_fake: torch.Tensor
    d_cls: torch.Tensor
    d_gp: torch.Tensor
    g_fake: torch.Tensor = None
    g_rec: torch.Tensor = None
    g_cls: torch.Tensor = None

    def items(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if v is not None:
                yield f.name, v


class Logger:
    def __init__(self, log_dir, flush_every=10):
        self.writer = SummaryWriter(log_dir)
        self.flush_every = flush_every
        self.scalars = {}

    def log_step(self, outputs, step):
        for tag, value in outputs.items():
            self.scalars.setdefault(tag, []).append(value)  # leak
        if step % self.flush_every == 0:
            for tag, values in self.scalars.items():
                self.writer.add_scalar(f"train/{tag}", values[-1], step)

    def summary(self, window=100):
        return {tag: torch.stack(v[-window:]).mean().item() for tag, v in self.scalars.items()}


def gradient_penalty(y, x):
    weight = torch.ones_like(y)
    dydx = torch.autograd.grad(outputs=y, inputs=x, grad_outputs=weight,
                               retain_graph=True, create_graph=True, only_inputs=True)[0]
    dydx = dydx.view(dydx.size(0), -1)
    return ((dydx.norm(2, dim=1) - 1) ** 2).mean()


def classification_loss(logit, target):
    return F.binary_cross_entropy_with_logits(logit, target, reduction="sum") / logit.size(0)


class Solver:
    def __init__(self, loader, config):
        self.loader = loader
        self.c_dim = config.c_dim
        self.lambda_cls = config.lambda_cls
        self.lambda_rec = config.lambda_rec
        self.lambda_gp = config.lambda_gp
        self.n_critic = config.n_critic
        self.num_iters = config.num_iters
        self.log_step = config.log_step
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        self.G = Generator(config.g_conv_dim, config.c_dim, config.g_repeat_num).to(self.device)
        self.D = Discriminator(config.image_size, config.d_conv_dim, config.c_dim,
                               config.d_repeat_num).to(self.device)
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), config.g_lr, (0.5, 0.999))
        self.d_optimizer = torch.optim.Adam(self.D.parameters(), config.d_lr, (0.5, 0.999))
        self.logger = Logger(config.log_dir)
        self.model_save_dir = config.model_save_dir

    def _discriminator_step(self, x_real, label_org, label_trg):
        out_src, out_cls = self.D(x_real)
        d_loss_real = -torch.mean(out_src)
        d_loss_cls = classification_loss(out_cls, label_org)

        x_fake = self.G(x_real, label_trg)
        out_src, _ = self.D(x_fake.detach())
        d_loss_fake = torch.mean(out_src)

        alpha = torch.rand(x_real.size(0), 1, 1, 1, device=self.device)
        x_hat = (alpha * x_real.data + (1 - alpha) * x_fake.data).requires_grad_(True)
        out_src, _ = self.D(x_hat)
        d_loss_gp = gradient_penalty(out_src, x_hat)

        d_loss = d_loss_real + d_loss_fake + self.lambda_cls * d_loss_cls + self.lambda_gp * d_loss_gp
        self.d_optimizer.zero_grad()
        d_loss.backward()
        self.d_optimizer.step()
        return StepOutputs(d_real=d_loss_real, d_fake=d_loss_fake, d_cls=d_loss_cls, d_gp=d_loss_gp)

    def _generator_step(self, x_real, label_org, label_trg, outputs):
        x_fake = self.G(x_real, label_trg)
        out_src, out_cls = self.D(x_fake)
        g_loss_fake = -torch.mean(out_src)
        g_loss_cls = classification_loss(out_cls, label_trg)
        x_rec = self.G(x_fake, label_org)
        g_loss_rec = torch.mean(torch.abs(x_real - x_rec))

        g_loss = g_loss_fake + self.lambda_rec * g_loss_rec + self.lambda_cls * g_loss_cls
        self.g_optimizer.zero_grad()
        g_loss.backward()
        self.g_optimizer.step()
        outputs.g_fake, outputs.g_rec, outputs.g_cls = g_loss_fake, g_loss_rec, g_loss_cls
        return outputs

    def train(self):
        data_iter = iter(self.loader)
        start = time.time()
        for i in range(self.num_iters):
            try:
                x_real, label_org = next(data_iter)
            except StopIteration:
                data_iter = iter(self.loader)
                x_real, label_org = next(data_iter)
            label_trg = label_org[torch.randperm(label_org.size(0))]
            x_real = x_real.to(self.device)
            label_org, label_trg = label_org.to(self.device), label_trg.to(self.device)

            outputs = self._discriminator_step(x_real, label_org, label_trg)
            if (i + 1) % self.n_critic == 0:
                outputs = self._generator_step(x_real, label_org, label_trg, outputs)
            self.logger.log_step(outputs, i + 1)

            if (i + 1) % self.log_step == 0:
                et = str(datetime.timedelta(seconds=time.time() - start))[:-7]
                msg = ", ".join(f"{k}: {v:.4f}" for k, v in self.logger.summary().items())
                print(f"Elapsed [{et}], Iteration [{i + 1}/{self.num_iters}], {msg}")
            if (i + 1) % 10000 == 0:
                torch.save(self.G.state_dict(), os.path.join(self.model_save_dir, f"{i + 1}-G.ckpt"))
                torch.save(self.D.state_dict(), os.path.join(self.model_save_dir, f"{i + 1}-D.ckpt"))
