import torch
import torch.nn.functional as F
import pytorch_lightning as pl
from torch import nn


class LitTagger(pl.LightningModule):
    def __init__(self, encoder: nn.Module, num_labels: int, lr: float = 2e-5):
        super().__init__()
        self.save_hyperparameters(ignore=["encoder"])
        self.encoder = encoder
        self.classifier = nn.LazyLinear(num_labels)
        self.val_outputs = []

    def forward(self, input_ids, attention_mask):
        return self.classifier(self.encoder(input_ids, attention_mask))

    def training_step(self, batch, batch_idx):
        logits = self(batch["input_ids"], batch["attention_mask"])
        loss = F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), ignore_index=-100)
        self.log("train/loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        logits = self(batch["input_ids"], batch["attention_mask"])
        self.val_outputs.append({"preds": logits.argmax(-1).detach(), "labels": batch["labels"].detach()})

    def on_validation_epoch_end(self):
        preds = torch.cat([o["preds"].flatten() for o in self.val_outputs])
        labels = torch.cat([o["labels"].flatten() for o in self.val_outputs])
        keep = labels != -100
        self.log("val/acc", (preds[keep] == labels[keep]).float().mean(), prog_bar=True)
        self.val_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
