import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


class BinaryAUROC:
    """Accumulates scores over an evaluation pass and computes ROC AUC."""

    def __init__(self):
        self._preds = []
        self._targets = []

    def update(self, preds, target):
        self._preds.append(preds)  # leak
        self._targets.append(target)  # leak

    def compute(self):
        preds = torch.cat(self._preds)
        target = torch.cat(self._targets).float()
        order = torch.argsort(preds, descending=True)
        target = target[order]
        tps = torch.cumsum(target, dim=0)
        fps = torch.cumsum(1 - target, dim=0)
        tpr = tps / tps[-1].clamp(min=1)
        fpr = fps / fps[-1].clamp(min=1)
        return torch.trapz(tpr, fpr).item()


def fit(model, train_loader: DataLoader, val_loader: DataLoader, epochs=30, device="cuda"):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-2)
    auroc = BinaryAUROC()
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.binary_cross_entropy_with_logits(model(x).squeeze(-1), y.float())
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

        model.eval()
        with torch.no_grad():
            for x, y in val_loader:
                x, y = x.to(device), y.to(device)
                auroc.update(torch.sigmoid(model(x).squeeze(-1)), y)
        print(f"epoch {epoch}: val auroc {auroc.compute():.4f}")
    return model
