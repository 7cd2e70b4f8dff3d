import pytorch_lightning as pl
import torch


class Lit(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.outs = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        self.outs.append({"loss": loss, "preds": logits})  # leak
        return loss

    def on_train_epoch_end(self):
        self.outs.clear()
