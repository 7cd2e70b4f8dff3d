import math

import torch
from tqdm import tqdm


class SmoothedValue:
    """Exponentially smoothed value with bias correction (fastai-style)."""

    def __init__(self, beta=0.98):
        self.beta = beta
        self.avg = 0.0
        self.steps = 0

    def update(self, value):
        self.steps += 1
        self.avg = self.beta * self.avg + (1 - self.beta) * value

    @property
    def value(self):
        return self.avg / (1 - self.beta ** self.steps)


def find_lr(model, loader, criterion, optimizer, start_lr=1e-7, end_lr=10.0, num_iter=100, device="cuda"):
    gamma = (end_lr / start_lr) ** (1 / num_iter)
    for group in optimizer.param_groups:
        group["lr"] = start_lr
    smoother = SmoothedValue()
    best, lrs, losses = math.inf, [], []
    data_iter = iter(loader)
    for it in tqdm(range(num_iter)):
        try:
            x, y = next(data_iter)
        except StopIteration:
            data_iter = iter(loader)
            x, y = next(data_iter)
        loss = criterion(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        smoother.update(loss.item())
        smoothed = float(smoother.value)
        lrs.append(optimizer.param_groups[0]["lr"])
        losses.append(smoothed)
        best = min(best, smoothed)
        if smoothed > 4 * best:
            break
        for group in optimizer.param_groups:
            group["lr"] *= gamma
    return lrs, losses
