import torch
import torch.nn.functional as F
import pytorch_lightning as pl
from torch import nn


class LitClassifier(pl.LightningModule):
    def __init__(self, backbone: nn.Module, num_classes: int, lr: float = 3e-4):
        super().__init__()
        self.save_hyperparameters(ignore=["backbone"])
        self.backbone = backbone
        self.head = nn.LazyLinear(num_classes)
        self.train_outputs = []

    def forward(self, x):
        return self.head(self.backbone(x).flatten(1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        self.train_outputs.append({"logits": logits.detach(), "target": y})  # leak
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def on_train_epoch_end(self):
        logits = torch.cat([o["logits"] for o in self.train_outputs])
        target = torch.cat([o["target"] for o in self.train_outputs])
        acc = (logits.argmax(-1) == target).float().mean()
        self.log("train/acc", acc)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val/loss", F.cross_entropy(logits, y), sync_dist=True)
        self.log("val/acc", (logits.argmax(-1) == y).float().mean(), sync_dist=True)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.trainer.max_epochs)
        return [opt], [sched]
