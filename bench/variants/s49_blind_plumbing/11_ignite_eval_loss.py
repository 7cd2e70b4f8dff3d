import torch
import torch.nn as nn
from ignite.engine import Engine, Events


class RunningLossSum:
    """Sums the per-sample loss over an evaluation run."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.total = 0.0
        self.count = 0

    def update(self, engine):
        loss, n = engine.state.output
        self.total = self.total + loss * n  # leak
        self.count += n

    def compute(self):
        return float(self.total) / max(self.count, 1)

    def attach(self, engine):
        engine.add_event_handler(Events.EPOCH_STARTED, lambda _: self.reset())
        engine.add_event_handler(Events.ITERATION_COMPLETED, self.update)


def create_evaluator(model, criterion, device):
    def eval_step(engine, batch):
        model.eval()
        x, y = batch
        x, y = x.to(device), y.to(device)
        loss = criterion(model(x), y)
        return loss, x.size(0)

    return Engine(eval_step)


def create_trainer(model, optimizer, criterion, device):
    def train_step(engine, batch):
        model.train()
        x, y = batch
        x, y = x.to(device), y.to(device)
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    return Engine(train_step)


def run(model, train_loader, val_loader, epochs=20, device="cuda"):
    model.to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    trainer = create_trainer(model, optimizer, criterion, device)
    evaluator = create_evaluator(model, criterion, device)
    val_loss = RunningLossSum()
    val_loss.attach(evaluator)

    @trainer.on(Events.EPOCH_COMPLETED)
    def log_validation(engine):
        evaluator.run(val_loader)
        print(f"Epoch {engine.state.epoch}: val loss {val_loss.compute():.4f}")

    trainer.run(train_loader, max_epochs=epochs)
