import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


class HardExampleMiner:
    """Keeps low-confidence training samples so they can be replayed later."""

    def __init__(self, threshold=0.5):
        self.threshold = threshold
        self.hard_inputs = []
        self.hard_targets = []

    @torch.no_grad()
    def __call__(self, inputs, logits, targets):
        conf = logits.softmax(dim=-1).gather(1, targets[:, None]).squeeze(1)
        mask = conf < self.threshold
        if mask.any():
            self.hard_inputs += [inputs[mask]]  # leak
            self.hard_targets += [targets[mask]]  # leak

    def replay_batch(self, batch_size):
        if not self.hard_inputs:
            return None
        x, y = torch.cat(self.hard_inputs), torch.cat(self.hard_targets)
        idx = torch.randperm(x.size(0), device=x.device)[:batch_size]
        return x[idx], y[idx]


class ClassifierTrainer:
    def __init__(self, model, optimizer, device="cuda", replay_every=10):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.device = device
        self.replay_every = replay_every
        self.miner = HardExampleMiner()

    def _step(self, x, y):
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return logits.detach()

    def train_epoch(self, loader: DataLoader):
        self.model.train()
        for i, (x, y) in enumerate(loader):
            x, y = x.to(self.device), y.to(self.device)
            logits = self._step(x, y)
            self.miner(x, logits, y)
            if i % self.replay_every == 0:
                replay = self.miner.replay_batch(x.size(0))
                if replay is not None:
                    self._step(*replay)

    def fit(self, loader, epochs):
        for _ in range(epochs):
            self.train_epoch(loader)
