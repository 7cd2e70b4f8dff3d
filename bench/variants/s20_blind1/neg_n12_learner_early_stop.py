"""A small fastai-flavoured Learner plus the callbacks our sweeps rely on.

Callbacks get a back-reference to the learner (``self.learn``) and are invoked
by name (``before_fit``, ``after_batch`` ...). ``CancelFitException`` aborts the
run cleanly from inside any callback.
"""
import logging
import math
import time
from collections import deque

import torch
from torch import nn

logger = logging.getLogger(__name__)


class CancelFitException(Exception):
    pass


class Callback:
    order = 0
    learn = None

    def __call__(self, event_name):
        fn = getattr(self, event_name, None)
        if fn is not None:
            fn()


class Recorder(Callback):
    """Records the smoothed training loss once per batch (as python floats)."""

    order = 50

    def __init__(self, beta=0.98):
        self.beta = beta

    def before_fit(self):
        self.losses, self.lrs, self._avg, self._count = [], [], 0.0, 0

    def after_batch(self):
        if not self.learn.training:
            return
        self._count += 1
        self._avg = self.beta * self._avg + (1 - self.beta) * self.learn.loss.item()
        self.losses.append(self._avg / (1 - self.beta ** self._count))
        self.lrs.append(self.learn.opt.param_groups[0]["lr"])


class TrainLossEarlyStopping(Callback):
    """Stops when the training loss has not improved by ``min_delta`` for ``patience`` batches,
    or when it blows up by more than ``div_factor`` over the best value seen."""

    order = 60

    def __init__(self, patience=500, min_delta=1e-4, div_factor=4.0):
        self.patience = patience
        self.min_delta = min_delta
        self.div_factor = div_factor

    def before_fit(self):
        self.recent = deque(maxlen=self.patience)
        self.best = math.inf

    def after_batch(self):
        if not self.learn.training:
            return
        current = self.learn.loss.item()
        self.recent.append(current)
        window = self.recent
        if current > self.div_factor * self.best:
            logger.warning("loss diverged (%.4f > %.1f x best %.4f)", current, self.div_factor, self.best)
            raise CancelFitException()
        window_best = min(window)
        if window_best < self.best - self.min_delta:
            self.best = window_best
        elif len(window) == self.patience:
            logger.info("no improvement for %d batches, stopping", self.patience)
            raise CancelFitException()


class Learner:
    def __init__(self, model, dls, loss_func, lr=1e-3, cbs=(), opt_func=torch.optim.AdamW):
        self.model, self.dls, self.loss_func, self.lr = model, dls, loss_func, lr
        self.opt = opt_func(model.parameters(), lr=lr)
        self.cbs = sorted(cbs, key=lambda c: c.order)
        for cb in self.cbs:
            cb.learn = self
        self.training = False

    def _event(self, name):
        for cb in self.cbs:
            cb(name)

    def _one_batch(self, xb, yb):
        self.pred = self.model(xb)
        self.loss_grad = self.loss_func(self.pred, yb)
        self.loss = self.loss_grad.clone()
        if self.training:
            self.loss_grad.backward()
            self.opt.step()
            self.opt.zero_grad()
        self._event("after_batch")

    def _one_epoch(self, dl, training):
        self.training = training
        self.model.train(training)
        ctx = torch.enable_grad() if training else torch.no_grad()
        with ctx:
            for xb, yb in dl:
                self._one_batch(xb, yb)

    def fit(self, n_epoch):
        self._event("before_fit")
        t0 = time.time()
        try:
            for epoch in range(n_epoch):
                self.epoch = epoch
                self._one_epoch(self.dls.train, True)
                self._one_epoch(self.dls.valid, False)
                logger.info("epoch %d done (%.1fs)", epoch, time.time() - t0)
        except CancelFitException:
            logger.info("fit cancelled at epoch %d", self.epoch)
        finally:
            self._event("after_fit")


def default_learner(model: nn.Module, dls, **kwargs):
    return Learner(model, dls, nn.CrossEntropyLoss(), cbs=[Recorder(), TrainLossEarlyStopping()], **kwargs)
