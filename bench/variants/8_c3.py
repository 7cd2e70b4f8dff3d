import torch

deferred = []


def train(model, loader, opt):
    for x, y in loader:
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        opt.step()
        deferred.append(lambda: loss.item())  # leak
