import copy

import torch
import torch.nn.functional as F


class CheckpointKeeper:
    """Keeps the weights of the best validated epoch so they can be restored."""

    def __init__(self, mode="min"):
        assert mode in ("min", "max")
        self.mode = mode
        self.best_state = None
        self.best_score = None
        self.best_epoch = None

    def _is_better(self, score):
        if self.best_score is None:
            return True
        return score < self.best_score if self.mode == "min" else score > self.best_score

    def step(self, epoch, model, score):
        if self._is_better(score):
            self.best_state = copy.deepcopy(model.state_dict())
            self.best_score = float(score)
            self.best_epoch = epoch

    def restore_best(self, model):
        model.load_state_dict(self.best_state)
        return self.best_epoch


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    total, n = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        total += F.cross_entropy(model(x), y, reduction="sum").item()
        n += y.numel()
    return total / n


def train(model, train_loader, val_loader, epochs=100, device="cuda"):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    keeper = CheckpointKeeper(mode="min")
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss = validate(model, val_loader, device)
        keeper.step(epoch, model, val_loss)
        print(f"epoch {epoch}: val_loss={val_loss:.4f}")
    best = keeper.restore_best(model)
    print(f"restored weights from epoch {best}")
    return model
