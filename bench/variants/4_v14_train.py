import torch
import torch.nn.functional as F
from mylib import compute_loss, losses, build_loss


class Runner:
    def __init__(self, model, loader, cfg):
        self.model = model
        self.loader = loader
        self.loss = build_loss(cfg)
        self.criterion = build_loss(cfg)
        self.loss_fn = build_loss(cfg)
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def compute_loss(self, out, y):
        return self.criterion(out, y)

    def run(self, cfg):
        total = 0
        for x, y in self.loader:
            out = self.model(x)
            loss = self.model.loss(out, y)
            loss.backward()
            self.opt.step()
            total += loss  # leak
        return total
