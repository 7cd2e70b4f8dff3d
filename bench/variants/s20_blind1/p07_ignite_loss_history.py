"""Training entry point built on pytorch-ignite.

    python train_ignite.py --epochs 20 --lr 3e-4 --log-interval 50
"""
import argparse
import logging

import torch
import torch.nn as nn
from ignite.engine import Engine, Events
from ignite.handlers import ModelCheckpoint, Timer
from ignite.metrics import Accuracy, Loss

from .data import get_loaders
from .models import build_model

logger = logging.getLogger("train")


class LossHistory:
    """Keeps the per-iteration training loss so it can be plotted after training."""

    def __init__(self, smoothing=0.98):
        self.smoothing = smoothing
        self.values = []

    def attach(self, engine):
        engine.add_event_handler(Events.ITERATION_COMPLETED, self.on_iteration)
        return self

    def on_iteration(self, engine):
        self.values.append(engine.state.output)  # leak

    def smoothed(self):
        out, avg = [], None
        for v in self.values:
            v = float(v)
            avg = v if avg is None else self.smoothing * avg + (1 - self.smoothing) * v
            out.append(avg)
        return out


def make_update_fn(model, optimizer, criterion, device, grad_clip=None):
    def _update(engine, batch):
        model.train()
        x, y = batch
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        optimizer.zero_grad()
        y_pred = model(x)
        loss = criterion(y_pred, y)
        loss.backward()
        if grad_clip:
            nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        return loss

    return _update


def make_eval_fn(model, device):
    @torch.no_grad()
    def _inference(engine, batch):
        model.eval()
        x, y = batch
        return model(x.to(device)), y.to(device)

    return _inference


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--log-interval", type=int, default=100)
    p.add_argument("--grad-clip", type=float, default=None)
    p.add_argument("--out", default="checkpoints")
    return p.parse_args()


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, val_loader = get_loaders(args.batch_size)
    model = build_model().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    trainer = Engine(make_update_fn(model, optimizer, criterion, device, args.grad_clip))
    evaluator = Engine(make_eval_fn(model, device))
    Accuracy().attach(evaluator, "acc")
    Loss(criterion).attach(evaluator, "loss")

    history = LossHistory().attach(trainer)
    timer = Timer(average=True)
    timer.attach(trainer, step=Events.ITERATION_COMPLETED)

    @trainer.on(Events.ITERATION_COMPLETED(every=args.log_interval))
    def log_training(engine):
        logger.info("epoch %d iter %d loss %.4f (%.3fs/it)", engine.state.epoch,
                    engine.state.iteration, engine.state.output.item(), timer.value())

    @trainer.on(Events.EPOCH_COMPLETED)
    def run_validation(engine):
        evaluator.run(val_loader)
        m = evaluator.state.metrics
        logger.info("epoch %d  val_acc %.4f  val_loss %.4f", engine.state.epoch, m["acc"], m["loss"])

    ckpt = ModelCheckpoint(args.out, "model", n_saved=3, require_empty=False,
                           score_function=lambda e: e.state.metrics["acc"], score_name="acc")
    evaluator.add_event_handler(Events.COMPLETED, ckpt, {"model": model})

    trainer.run(train_loader, max_epochs=args.epochs)
    curve = history.smoothed()
    if curve:
        logger.info("final smoothed train loss %.4f", curve[-1])


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
