import torch
import torch.nn.functional as F
import lightning as L
from torch import nn


class LitInstanceDiscrimination(L.LightningModule):
    def __init__(self, encoder: nn.Module, feat_dim: int = 128, temperature: float = 0.1,
                 bank_update_every: int = 1, lr: float = 0.03):
        super().__init__()
        self.save_hyperparameters(ignore=["encoder"])
        self.encoder = encoder
        self.projector = nn.Sequential(nn.LazyLinear(512), nn.ReLU(), nn.Linear(512, feat_dim))
        self.register_buffer("bank", torch.zeros(0, feat_dim))

    def embed(self, x):
        return F.normalize(self.projector(self.encoder(x).flatten(1)), dim=-1)

    def training_step(self, batch, batch_idx):
        (x1, x2), _ = batch
        z1, z2 = self.embed(x1), self.embed(x2)
        pos = (z1 * z2).sum(-1, keepdim=True)
        neg = z1 @ self.bank.T
        logits = torch.cat([pos, neg], dim=1) / self.hparams.temperature
        target = torch.zeros(z1.size(0), dtype=torch.long, device=self.device)
        loss = F.cross_entropy(logits, target)
        if batch_idx % self.hparams.bank_update_every == 0:
            self.bank = torch.cat([self.bank, z2.detach()], dim=0)  # leak
        self.log("train/loss", loss, prog_bar=True)
        self.log("train/bank_size", float(self.bank.size(0)))
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9, weight_decay=5e-4)
