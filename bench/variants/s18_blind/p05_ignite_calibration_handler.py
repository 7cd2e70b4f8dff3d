"""CIFAR-10 ResNet training with PyTorch-Ignite and a calibration monitor.

The ``CalibrationMonitor`` handler keeps the softmax outputs of the training
batches so that expected calibration error (ECE) can be plotted against the
number of iterations.
"""
import argparse
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
from ignite.contrib.handlers import ProgressBar
from ignite.engine import Engine, Events, create_supervised_evaluator
from ignite.handlers import ModelCheckpoint
from ignite.metrics import Accuracy, Loss
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

logger = logging.getLogger("calib")


def expected_calibration_error(probs, targets, n_bins=15):
    conf, pred = probs.max(dim=1)
    acc = pred.eq(targets).float()
    bins = torch.linspace(0, 1, n_bins + 1, device=probs.device)
    ece = torch.zeros((), device=probs.device)
    for lo, hi in zip(bins[:-1], bins[1:]):
        mask = (conf > lo) & (conf <= hi)
        if mask.any():
            ece += mask.float().mean() * (conf[mask].mean() - acc[mask].mean()).abs()
    return ece.item()


class CalibrationMonitor:
    """Attach to a trainer; computes ECE over all training outputs seen so far."""

    def __init__(self, every: int = 500):
        self.every = every
        self._buffer = []

    def attach(self, engine: Engine) -> None:
        engine.add_event_handler(Events.ITERATION_COMPLETED, self.record)
        engine.add_event_handler(Events.ITERATION_COMPLETED(every=self.every), self.report)

    def record(self, engine: Engine) -> None:
        out = engine.state.output
        self._buffer.append((out["probs"], out["y"]))  # leak

    def report(self, engine: Engine) -> None:
        probs = torch.cat([p for p, _ in self._buffer])
        targets = torch.cat([t for _, t in self._buffer])
        ece = expected_calibration_error(probs, targets)
        engine.state.metrics["train_ece"] = ece
        logger.info("iter %d  ECE=%.4f", engine.state.iteration, ece)


def make_update_fn(model, optimizer, device, label_smoothing=0.0):
    def _update(engine, batch):
        model.train()
        x, y = batch
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        logits = model(x)
        loss = F.cross_entropy(logits, y, label_smoothing=label_smoothing)
        loss.backward()
        optimizer.step()
        return {"loss": loss.item(), "probs": logits.detach().softmax(dim=1), "y": y}

    return _update


def get_loaders(root, batch_size, workers):
    norm = transforms.Normalize((0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261))
    train_tf = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(), transforms.ToTensor(), norm])
    test_tf = transforms.Compose([transforms.ToTensor(), norm])
    train = datasets.CIFAR10(root, train=True, download=True, transform=train_tf)
    test = datasets.CIFAR10(root, train=False, download=True, transform=test_tf)
    return (
        DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=workers, pin_memory=True, drop_last=True),
        DataLoader(test, batch_size=512, num_workers=workers, pin_memory=True),
    )


def run(args):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = models.resnet18(num_classes=10)
    model.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    model.maxpool = nn.Identity()
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4, nesterov=True)

    train_loader, test_loader = get_loaders(args.data, args.batch_size, args.workers)
    trainer = Engine(make_update_fn(model, optimizer, device, args.label_smoothing))
    evaluator = create_supervised_evaluator(
        model, metrics={"acc": Accuracy(), "nll": Loss(nn.CrossEntropyLoss())}, device=device
    )

    CalibrationMonitor(every=args.ece_every).attach(trainer)
    ProgressBar(persist=False).attach(trainer, output_transform=lambda o: {"loss": o["loss"]})

    @trainer.on(Events.EPOCH_COMPLETED)
    def validate(engine):
        evaluator.run(test_loader)
        m = evaluator.state.metrics
        logger.info("epoch %d  acc=%.4f  nll=%.4f", engine.state.epoch, m["acc"], m["nll"])

    ckpt = ModelCheckpoint(args.out, "resnet18", n_saved=2, require_empty=False)
    trainer.add_event_handler(Events.EPOCH_COMPLETED, ckpt, {"model": model, "optimizer": optimizer})
    trainer.run(train_loader, max_epochs=args.epochs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="./data")
    parser.add_argument("--out", default="./checkpoints")
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--label-smoothing", type=float, default=0.0)
    parser.add_argument("--ece-every", type=int, default=500)
    logging.basicConfig(level=logging.INFO)
    run(parser.parse_args())
