import torch
import torch.nn as nn
import pytorch_lightning as pl


class DeferredHistogramModule(pl.LightningModule):
    """Logs histograms of logits, but only once training finishes (TB is slow)."""

    def __init__(self, encoder: nn.Module, n_classes: int = 10) -> None:
        super().__init__()
        self.encoder = encoder
        self.classifier = nn.Linear(encoder.output_dim, n_classes)
        self.pending_logs = []

    def forward(self, x):
        return self.classifier(self.encoder(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = nn.functional.cross_entropy(logits, y)
        step = self.global_step
        if batch_idx % 10 == 0:
            self.pending_logs.append(lambda: self.logger.experiment.add_histogram("logits", logits, step))  # leak
        self.log("train_loss", loss)
        return loss

    def on_train_end(self) -> None:
        for fn in self.pending_logs:
            fn()
        self.pending_logs.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    trainer = pl.Trainer(max_epochs=50, accelerator="gpu", devices=1)
    # trainer.fit(DeferredHistogramModule(build_encoder()), datamodule)
