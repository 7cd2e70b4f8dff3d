import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn


class TextClassifier(pl.LightningModule):
    def __init__(self, vocab_size=30000, emb=256, hidden=512, n_classes=4, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.emb = nn.Embedding(vocab_size, emb, padding_idx=0)
        self.rnn = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(hidden * 2, n_classes)
        self.train_losses = []
        self.val_acc = []

    def forward(self, tokens):
        h, _ = self.rnn(self.emb(tokens))
        return self.fc(h.max(dim=1).values)

    def training_step(self, batch, batch_idx):
        tokens, labels = batch
        logits = self(tokens)
        loss = F.cross_entropy(logits, labels)
        self.train_losses.append(loss.item())
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def on_train_epoch_end(self):
        if self.train_losses:
            self.log("train/loss_epoch", sum(self.train_losses) / len(self.train_losses))
        self.train_losses.clear()

    def validation_step(self, batch, batch_idx):
        tokens, labels = batch
        logits = self(tokens)
        acc = (logits.argmax(-1) == labels).float().mean()
        self.val_acc.append(acc.item())
        self.log("val/acc", acc)

    def on_validation_epoch_end(self):
        if self.val_acc:
            self.log("val/acc_epoch", sum(self.val_acc) / len(self.val_acc))
        self.val_acc.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


if __name__ == "__main__":
    from torch.utils.data import DataLoader, TensorDataset

    x = torch.randint(1, 30000, (5000, 64))
    y = torch.randint(0, 4, (5000,))
    dl = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    trainer = pl.Trainer(max_epochs=20, accelerator="gpu", devices=1)
    trainer.fit(TextClassifier(), dl, dl)
