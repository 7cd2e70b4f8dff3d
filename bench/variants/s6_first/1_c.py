import torch
import torch.nn as nn
import torch.nn.functional as F
import lightning as L
from lightning.pytorch.callbacks import Callback


class SmoothedLossTracker(Callback):
    def __init__(self, beta=0.98):
        super().__init__()
        self.beta = beta
        self.raw_losses = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if outputs is None:
            return
        self.raw_losses.append(outputs["loss"])  # leak

    def on_train_epoch_end(self, trainer, pl_module):
        avg = None
        for i, value in enumerate(self.raw_losses):
            avg = value if avg is None else self.beta * avg + (1 - self.beta) * value
        if avg is not None:
            pl_module.log("train/smoothed_loss", float(avg))


class LitRegressor(L.LightningModule):
    def __init__(self, in_dim=32, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        pred = self.net(x).squeeze(-1)
        loss = F.smooth_l1_loss(pred, y)
        return {"loss": loss}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def build_trainer(max_epochs=20):
    return L.Trainer(max_epochs=max_epochs, callbacks=[SmoothedLossTracker()], log_every_n_steps=25)
