"""Ignite training script with a per-iteration history recorder handler."""
from collections import defaultdict

import torch
import torch.nn as nn
from ignite.engine import Engine, Events
from ignite.handlers import ProgressBar


def grad_global_norm(model: nn.Module) -> torch.Tensor:
    norms = [p.grad.detach().norm(2) for p in model.parameters() if p.grad is not None]
    return torch.stack(norms).norm(2)


def create_trainer(model, optimizer, loss_fn, device, max_norm=1.0):
    def update(engine, batch):
        model.train()
        x, y = batch
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        optimizer.zero_grad()
        y_pred = model(x)
        loss = loss_fn(y_pred, y)
        loss.backward()
        gnorm = grad_global_norm(model)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        return {"loss": loss.detach(), "grad_norm": gnorm}

    return Engine(update)


class HistoryRecorder:
    """Stores per-iteration outputs on engine.state and logs epoch means."""

    def __init__(self, keys=("loss", "grad_norm")):
        self.keys = keys

    def attach(self, engine):
        engine.add_event_handler(Events.STARTED, self.started)
        engine.add_event_handler(Events.ITERATION_COMPLETED, self.iteration_completed)
        engine.add_event_handler(Events.EPOCH_COMPLETED, self.epoch_completed)

    def started(self, engine):
        engine.state.history = defaultdict(list)

    def iteration_completed(self, engine):
        for key in self.keys:
            engine.state.history[key].append(engine.state.output[key])  # leak

    def epoch_completed(self, engine):
        n = engine.state.epoch_length
        msg = []
        for key, values in engine.state.history.items():
            mean = torch.stack(values[-n:]).mean().item()
            msg.append(f"{key}={mean:.4f}")
        engine.logger.info("Epoch %d: %s", engine.state.epoch, " ".join(msg))


def run(model, train_loader, epochs=90, lr=0.1):
    device = torch.device("cuda")
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    trainer = create_trainer(model, optimizer, nn.CrossEntropyLoss(), device)
    HistoryRecorder().attach(trainer)
    ProgressBar(persist=False).attach(trainer, output_transform=lambda out: {"loss": out["loss"].item()})
    trainer.run(train_loader, max_epochs=epochs)
