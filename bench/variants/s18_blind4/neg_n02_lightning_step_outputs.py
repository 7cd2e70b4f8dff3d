"""Image classifier as a LightningModule (Lightning 2.x hooks)."""
from argparse import ArgumentParser

import torch
import torch.nn as nn
import torch.nn.functional as F
import lightning as L
from torch.utils.data import DataLoader, TensorDataset


class ConvNet(nn.Module):
    def __init__(self, num_classes=10, width=64):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, width * 2, 3, padding=1), nn.BatchNorm2d(width * 2), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(width * 2, num_classes)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


class LitClassifier(L.LightningModule):
    def __init__(self, lr: float = 1e-3, num_classes: int = 10, label_smoothing: float = 0.0):
        super().__init__()
        self.save_hyperparameters()
        self.net = ConvNet(num_classes)
        self.training_step_outputs = []
        self.validation_step_outputs = []

    def forward(self, x):
        return self.net(x)

    def _shared_step(self, batch):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y, label_smoothing=self.hparams.label_smoothing)
        acc = (logits.argmax(dim=1) == y).float().mean()
        return loss, acc

    def training_step(self, batch, batch_idx):
        loss, acc = self._shared_step(batch)
        self.training_step_outputs.append({"loss": loss.detach(), "acc": acc.detach()})
        self.log("train/loss_step", loss, prog_bar=True)
        return loss

    def on_train_epoch_end(self):
        losses = torch.stack([o["loss"] for o in self.training_step_outputs])
        accs = torch.stack([o["acc"] for o in self.training_step_outputs])
        self.log("train/loss_epoch", losses.mean())
        self.log("train/acc_epoch", accs.mean())
        self.training_step_outputs.clear()

    def validation_step(self, batch, batch_idx):
        loss, acc = self._shared_step(batch)
        self.validation_step_outputs.append(torch.stack([loss, acc]))

    def on_validation_epoch_end(self):
        stacked = torch.stack(self.validation_step_outputs).mean(0)
        self.log("val/loss", stacked[0])
        self.log("val/acc", stacked[1], prog_bar=True)
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.05)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.trainer.max_epochs)
        return {"optimizer": opt, "lr_scheduler": sched}


def fake_loader(n, bs, shuffle):
    ds = TensorDataset(torch.randn(n, 3, 32, 32), torch.randint(0, 10, (n,)))
    return DataLoader(ds, batch_size=bs, shuffle=shuffle, num_workers=4)


if __name__ == "__main__":
    parser = ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()

    model = LitClassifier(lr=args.lr)
    trainer = L.Trainer(max_epochs=args.epochs, accelerator="auto", log_every_n_steps=20)
    trainer.fit(model, fake_loader(50000, args.batch_size, True), fake_loader(10000, 256, False))
