"""Train a quantile LSTM forecaster.

    python -m forecast.train --csv data/load.csv --target load_mw
"""
import argparse
import logging

import torch
from ignite.engine import Engine, Events
from ignite.metrics import Loss, MeanAbsoluteError
from torch.utils.data import DataLoader

import forecast.handlers as fh
from forecast.data import load_splits
from forecast.model import QuantileLoss, Seq2SeqForecaster

logger = logging.getLogger("forecast")


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--csv", required=True)
    p.add_argument("--target", default="load_mw")
    p.add_argument("--lookback", type=int, default=168)
    p.add_argument("--horizon", type=int, default=24)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--probe-every", type=int, default=200)
    p.add_argument("--out", default="checkpoints/")
    return p.parse_args()


def create_trainer(model, optimizer, criterion, device, probe_every: int) -> Engine:
    def _update(engine, batch):
        model.train()
        past, fut, y = (t.to(device, non_blocking=True) for t in batch)
        pred = model(past, fut)
        loss = criterion(pred, y)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if engine.state.iteration % probe_every == 0:
            fh.attach_residual_probe(engine, pred[..., model.median_index()].detach(), y)
        return {"loss": loss.item()}

    return Engine(_update)


def create_evaluator(model, criterion, device) -> Engine:
    def _infer(engine, batch):
        model.eval()
        with torch.no_grad():
            past, fut, y = (t.to(device) for t in batch)
            pred = model(past, fut)
        return pred, y

    evaluator = Engine(_infer)
    mid = model.median_index()
    MeanAbsoluteError(output_transform=lambda o: (o[0][..., mid], o[1])).attach(evaluator, "mae")
    Loss(criterion).attach(evaluator, "pinball")
    return evaluator


def main():
    args = get_args()
    logging.basicConfig(level=logging.INFO)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    train_ds, val_ds, scaler, target_idx, n_feat = load_splits(args.csv, args.target, args.lookback, args.horizon)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=4, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=args.batch_size, num_workers=2)

    model = Seq2SeqForecaster(n_feat).to(device)
    criterion = QuantileLoss(model.quantiles).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)

    trainer = create_trainer(model, optimizer, criterion, device, args.probe_every)
    evaluator = create_evaluator(model, criterion, device)
    fh.attach_progress(trainer)
    fh.attach_validation(trainer, evaluator, val_dl, scaler, target_idx)
    fh.attach_checkpointing(trainer, evaluator, model, args.out)

    @trainer.on(Events.EPOCH_STARTED)
    def _adjust_lr(engine):
        if engine.state.epoch in (30, 45):
            for g in optimizer.param_groups:
                g["lr"] *= 0.3

    trainer.run(train_dl, max_epochs=args.epochs)


if __name__ == "__main__":
    main()
