"""LightningModule wiring the network, losses and balancing together."""
import argparse
import logging

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader

import mtlnet
from mtlnet.data import NYUv2
from mtlnet.heads import task_losses

logger = logging.getLogger(__name__)
TASKS = ("seg", "depth", "normal")


class MultiTaskModule(pl.LightningModule):
    def __init__(self, n_classes: int = 13, lr: float = 1e-4, balancing: str = "dwa", dwa_temp: float = 2.0):
        super().__init__()
        self.save_hyperparameters()
        self.net = mtlnet.MultiTaskNet(n_classes)
        if balancing == "uncertainty":
            self.balancer = mtlnet.UncertaintyWeighting(TASKS)
        else:
            self.balancer = mtlnet.DynamicWeightAverage(TASKS, temperature=dwa_temp)
        self.val_tracker = mtlnet.TaskLossTracker(TASKS)

    def training_step(self, batch, batch_idx):
        losses = task_losses(self.net(batch["image"]), batch)
        if isinstance(self.balancer, mtlnet.DynamicWeightAverage):
            self.balancer.observe(losses)
            total = self.balancer.combine(losses)
        else:
            total = self.balancer(losses)
        self.log_dict({f"train/{k}": v for k, v in losses.items()}, on_step=True, prog_bar=False)
        self.log("train/total", total, prog_bar=True)
        return total

    def on_train_epoch_end(self):
        if isinstance(self.balancer, mtlnet.DynamicWeightAverage):
            weights = self.balancer.end_epoch()
        else:
            weights = self.balancer.current_weights()
        for k, w in weights.items():
            self.log(f"weight/{k}", w)

    def validation_step(self, batch, batch_idx):
        losses = task_losses(self.net(batch["image"]), batch)
        self.val_tracker.update(losses)

    def on_validation_epoch_end(self):
        for k, v in self.val_tracker.means().items():
            self.log(f"val/{k}", v, sync_dist=True)
        self.val_tracker.reset()

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=1e-4)
        sched = torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=self.trainer.max_epochs, power=0.9)
        return [opt], [sched]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--balancing", choices=["dwa", "uncertainty"], default="dwa")
    p.add_argument("--batch-size", type=int, default=8)
    args = p.parse_args()

    train = DataLoader(NYUv2(args.data, "train"), args.batch_size, shuffle=True, num_workers=8, drop_last=True)
    val = DataLoader(NYUv2(args.data, "val"), args.batch_size, num_workers=4)
    model = MultiTaskModule(balancing=args.balancing)
    trainer = pl.Trainer(max_epochs=args.epochs, accelerator="gpu", devices=1, precision="16-mixed",
                         log_every_n_steps=20)
    trainer.fit(model, train, val)


if __name__ == "__main__":
    main()
