import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F


class LitRegressor(L.LightningModule):
    def __init__(self, net: nn.Module, lr: float = 1e-3) -> None:
        super().__init__()
        self.net = net
        self.lr = lr
        self.validation_step_outputs: list[dict[str, torch.Tensor]] = []

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train/mse", loss, on_step=True, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        preds = self(x)
        self.validation_step_outputs.append({"preds": preds, "target": y})

    def on_validation_epoch_end(self) -> None:
        preds = torch.cat([o["preds"] for o in self.validation_step_outputs])
        target = torch.cat([o["target"] for o in self.validation_step_outputs])
        ss_res = ((target - preds) ** 2).sum()
        ss_tot = ((target - target.mean()) ** 2).sum()
        self.log("val/r2", 1 - ss_res / ss_tot)
        self.log("val/mse", F.mse_loss(preds, target))
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
    trainer = L.Trainer(max_epochs=20, accelerator="auto")
    # trainer.fit(LitRegressor(net), datamodule=...)
