import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl


class TextClassifier(pl.LightningModule):
    def __init__(self, vocab_size=30000, embed_dim=256, num_classes=5, lr=3e-4):
        super().__init__()
        self.save_hyperparameters()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode="mean")
        self.classifier = nn.Sequential(
            nn.Linear(embed_dim, embed_dim),
            nn.GELU(),
            nn.Dropout(0.1),
            nn.Linear(embed_dim, num_classes),
        )
        self.train_losses = []

    def forward(self, tokens, offsets):
        return self.classifier(self.embedding(tokens, offsets))

    def training_step(self, batch, batch_idx):
        tokens, offsets, labels = batch
        logits = self(tokens, offsets)
        loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
        self.train_losses.append(loss)  # leak
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def on_train_epoch_end(self):
        epoch_loss = torch.stack(self.train_losses).mean()
        self.log("train/epoch_loss", epoch_loss)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.01)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        return [opt], [sched]
