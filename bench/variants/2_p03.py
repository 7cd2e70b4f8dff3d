import torch


class Trainer:
    def __init__(self, model, optimizer, train_loader):
        self.model = model
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.train_losses = []

    def train_epoch(self):
        for batch in self.train_loader:
            self.optimizer.zero_grad()
            loss = self.model(batch)
            loss.backward()
            self.optimizer.step()
            self.train_losses.append(loss)  # leak
