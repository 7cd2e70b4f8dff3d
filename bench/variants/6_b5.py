import torch


class Trainer:
    def __init__(self, model, opt, crit):
        self.model, self.opt, self.crit = model, opt, crit
        self.state = {"train_loss": 0.0}

    def train_step(self, batch):
        x, y = batch
        loss = self.crit(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.state["train_loss"] += loss  # leak
