"""A tiny event-driven engine in the spirit of pytorch-ignite.

Used by the internal ``recipes`` package where pulling in ignite itself is not
an option.  ``Engine.run`` iterates epochs, fires events, and keeps a small
``State`` that handlers can read (``state.output``, ``state.epoch_loss``).
"""
import enum
import logging
import time
from collections import defaultdict

import torch

log = logging.getLogger("recipes.engine")


class Events(enum.Enum):
    STARTED = "started"
    EPOCH_STARTED = "epoch_started"
    ITERATION_COMPLETED = "iteration_completed"
    EPOCH_COMPLETED = "epoch_completed"
    COMPLETED = "completed"


class State:
    def __init__(self, max_epochs):
        self.max_epochs = max_epochs
        self.epoch = 0
        self.iteration = 0
        self.epoch_iteration = 0
        self.output = None
        self.epoch_loss = 0.0
        self.metrics = {}
        self.times = {}

    def __repr__(self):
        return "State(epoch={}, iteration={}, metrics={})".format(
            self.epoch, self.iteration, self.metrics)


class Engine:
    def __init__(self, process_fn):
        self._process_fn = process_fn
        self._handlers = defaultdict(list)
        self.state = None
        self.should_terminate = False

    def on(self, event, *args, **kwargs):
        def decorator(fn):
            self.add_event_handler(event, fn, *args, **kwargs)
            return fn
        return decorator

    def add_event_handler(self, event, handler, *args, **kwargs):
        self._handlers[event].append((handler, args, kwargs))

    def fire(self, event):
        for handler, args, kwargs in self._handlers[event]:
            handler(self, *args, **kwargs)

    def terminate(self):
        self.should_terminate = True

    def _run_once_on_dataset(self, data):
        start = time.time()
        self.state.epoch_iteration = 0
        self.state.epoch_loss = 0.0
        for batch in data:
            self.state.iteration += 1
            self.state.epoch_iteration += 1
            self.state.output = self._process_fn(self, batch)
            batch_loss = self.state.output
            if isinstance(batch_loss, dict):
                batch_loss = batch_loss["loss"]
            self.state.epoch_loss += float(batch_loss)
            self.fire(Events.ITERATION_COMPLETED)
            if self.should_terminate:
                break
        return time.time() - start

    def run(self, data, max_epochs=1):
        self.state = State(max_epochs)
        self.should_terminate = False
        self.fire(Events.STARTED)
        while self.state.epoch < max_epochs and not self.should_terminate:
            self.state.epoch += 1
            self.fire(Events.EPOCH_STARTED)
            elapsed = self._run_once_on_dataset(data)
            self.state.times["epoch"] = elapsed
            n = max(self.state.epoch_iteration, 1)
            self.state.metrics["train_loss"] = float(self.state.epoch_loss) / n
            self.fire(Events.EPOCH_COMPLETED)
        self.fire(Events.COMPLETED)
        return self.state


def create_supervised_trainer(model, optimizer, loss_fn, device="cuda",
                              grad_accum=1, amp=False):
    scaler = torch.cuda.amp.GradScaler(enabled=amp)

    def _update(engine, batch):
        model.train()
        x, y = batch
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        with torch.autocast("cuda", enabled=amp):
            y_pred = model(x)
            loss = loss_fn(y_pred, y) / grad_accum
        scaler.scale(loss).backward()
        if engine.state.iteration % grad_accum == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        return {"loss": loss.item() * grad_accum, "y_pred": y_pred.detach(), "y": y}

    return Engine(_update)


def attach_progress(engine, every=50):
    @engine.on(Events.ITERATION_COMPLETED)
    def _log(eng):
        if eng.state.iteration % every == 0:
            log.info("epoch %d iter %d loss %.4f", eng.state.epoch,
                     eng.state.iteration, float(eng.state.output["loss"]))

    @engine.on(Events.EPOCH_COMPLETED)
    def _epoch(eng):
        log.info("epoch %d done in %.1fs: %s", eng.state.epoch,
                 eng.state.times["epoch"], eng.state.metrics)
