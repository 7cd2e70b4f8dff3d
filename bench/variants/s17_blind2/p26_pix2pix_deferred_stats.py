"""pix2pix LightningModule with a callback that defers expensive colour statistics."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback


def colour_stats(fake, real, bins=64):
    """Per-channel histogram intersection between generated and target images."""
    scores = []
    for c in range(fake.size(1)):
        hf = torch.histc(fake[:, c].float(), bins=bins, min=-1, max=1)
        hr = torch.histc(real[:, c].float(), bins=bins, min=-1, max=1)
        scores.append(torch.minimum(hf / hf.sum(), hr / hr.sum()).sum().item())
    return sum(scores) / len(scores)


class DeferredColourStats(Callback):
    """Histogram matching is slow, so it is queued and computed once training has finished."""

    def __init__(self, every_n_steps=50):
        self.every_n_steps = every_n_steps
        self._pending = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.global_step % self.every_n_steps != 0:
            return
        fake = outputs["fake"].detach()
        self._pending.append(functools.partial(colour_stats, fake, batch["target"]))  # leak

    def on_train_end(self, trainer, pl_module):
        scores = [fn() for fn in self._pending]
        for i, s in enumerate(scores):
            trainer.logger.log_metrics({"colour_hist_intersection": s}, step=i * self.every_n_steps)


class Pix2Pix(pl.LightningModule):
    def __init__(self, generator: nn.Module, discriminator: nn.Module, lambda_l1=100.0, lr=2e-4):
        super().__init__()
        self.save_hyperparameters(ignore=["generator", "discriminator"])
        self.G, self.D = generator, discriminator
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt_g, opt_d = self.optimizers()
        src, tgt = batch["source"], batch["target"]
        fake = self.G(src)

        pred_fake = self.D(torch.cat([src, fake.detach()], 1))
        pred_real = self.D(torch.cat([src, tgt], 1))
        d_loss = 0.5 * (F.binary_cross_entropy_with_logits(pred_fake, torch.zeros_like(pred_fake))
                        + F.binary_cross_entropy_with_logits(pred_real, torch.ones_like(pred_real)))
        opt_d.zero_grad()
        self.manual_backward(d_loss)
        opt_d.step()

        pred_fake = self.D(torch.cat([src, fake], 1))
        g_gan = F.binary_cross_entropy_with_logits(pred_fake, torch.ones_like(pred_fake))
        g_loss = g_gan + self.hparams.lambda_l1 * F.l1_loss(fake, tgt)
        opt_g.zero_grad()
        self.manual_backward(g_loss)
        opt_g.step()

        self.log_dict({"d_loss": d_loss, "g_loss": g_loss}, prog_bar=True)
        return {"fake": fake}

    def configure_optimizers(self):
        lr = self.hparams.lr
        return (torch.optim.Adam(self.G.parameters(), lr=lr, betas=(0.5, 0.999)),
                torch.optim.Adam(self.D.parameters(), lr=lr, betas=(0.5, 0.999)))


def fit(G, D, datamodule, epochs=200):
    trainer = pl.Trainer(max_epochs=epochs, accelerator="gpu", devices=1,
                         callbacks=[DeferredColourStats(every_n_steps=50)])
    trainer.fit(Pix2Pix(G, D), datamodule=datamodule)
