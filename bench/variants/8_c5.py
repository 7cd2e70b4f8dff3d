import functools
import torch


class Logger:
    def __init__(self):
        self.pending = []

    def log_later(self, fn):
        self.pending.append(fn)


def train(model, loader, logger):
    for x, y in loader:
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        loss.backward()
        logger.log_later(functools.partial(print, loss))  # leak
