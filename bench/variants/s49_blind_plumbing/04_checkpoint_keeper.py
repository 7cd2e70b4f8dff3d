import torch
import torch.nn.functional as F


class CheckpointKeeper:
    """Keeps the weights of every validated epoch so the best one can be restored."""

    def __init__(self, mode="min"):
        assert mode in ("min", "max")
        self.mode = mode
        self.snapshots = {}
        self.scores = {}

    def step(self, epoch, model, score):
        self.snapshots[epoch] = {k: v.detach().clone() for k, v in model.state_dict().items()}  # leak
        self.scores[epoch] = float(score)

    def best_epoch(self):
        pick = min if self.mode == "min" else max
        return pick(self.scores, key=lambda e: self.scores[e])

    def restore_best(self, model):
        epoch = self.best_epoch()
        model.load_state_dict(self.snapshots[epoch])
        return epoch


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
