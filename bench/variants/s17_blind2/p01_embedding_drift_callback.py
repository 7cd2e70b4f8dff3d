"""Metric-learning LightningModule with an embedding-drift monitoring callback."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback


class EmbeddingDriftMonitor(Callback):
    """Tracks the norm distribution of training embeddings over a sliding window."""

    def __init__(self, log_every: int = 200, window: int = 200):
        super().__init__()
        self.log_every = log_every
        self.window = window
        self.bank = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        emb = outputs["embeddings"]
        self.bank.append(emb.detach())  # leak
        if trainer.global_step > 0 and trainer.global_step % self.log_every == 0:
            self._report(pl_module)

    def _report(self, pl_module):
        feats = torch.cat(self.bank[-self.window:])
        norms = feats.float().norm(dim=1)
        sim = feats @ feats.t()
        off_diag = sim[~torch.eye(sim.size(0), dtype=torch.bool, device=sim.device)]
        pl_module.log("emb/norm_mean", norms.mean().item())
        pl_module.log("emb/norm_std", norms.std().item())
        pl_module.log("emb/mean_cosine", off_diag.mean().item())


class MetricLearner(pl.LightningModule):
    def __init__(self, backbone: nn.Module, feat_dim: int = 2048, dim: int = 128,
                 num_classes: int = 1000, scale: float = 30.0, lr: float = 3e-4):
        super().__init__()
        self.save_hyperparameters(ignore=["backbone"])
        self.backbone = backbone
        self.proj = nn.Sequential(nn.Linear(feat_dim, 512), nn.GELU(), nn.Linear(512, dim))
        self.proxies = nn.Parameter(torch.randn(num_classes, dim) * 0.01)

    def forward(self, x):
        return F.normalize(self.proj(self.backbone(x)), dim=-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        emb = self(x)
        logits = emb @ F.normalize(self.proxies, dim=-1).t() * self.hparams.scale
        loss = F.cross_entropy(logits, y)
        self.log("train/loss", loss, prog_bar=True)
        return {"loss": loss, "embeddings": emb}

    def validation_step(self, batch, batch_idx):
        x, y = batch
        emb = self(x)
        logits = emb @ F.normalize(self.proxies, dim=-1).t() * self.hparams.scale
        self.log("val/loss", F.cross_entropy(logits, y), sync_dist=True)
        self.log("val/acc", (logits.argmax(-1) == y).float().mean(), sync_dist=True)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.05)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.trainer.max_epochs)
        return [opt], [sched]


def build_trainer(max_epochs: int = 30) -> pl.Trainer:
    return pl.Trainer(
        max_epochs=max_epochs,
        accelerator="gpu",
        devices=1,
        precision="16-mixed",
        callbacks=[EmbeddingDriftMonitor(log_every=200)],
    )
