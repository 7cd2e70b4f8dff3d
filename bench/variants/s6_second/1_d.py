import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader


class SegmentationTrainer:
    def __init__(self, model: nn.Module, lr: float = 1e-3, device: str = "cuda"):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)

    def compute_loss(self, logits: Tensor, masks: Tensor) -> Tensor:
        ce = F.cross_entropy(logits, masks)
        probs = logits.softmax(dim=1)
        one_hot = F.one_hot(masks, logits.size(1)).permute(0, 3, 1, 2).float()
        inter = (probs * one_hot).sum(dim=(2, 3))
        union = probs.sum(dim=(2, 3)) + one_hot.sum(dim=(2, 3))
        dice = 1 - (2 * inter + 1) / (union + 1)
        return ce + dice.mean()

    def train_epoch(self, loader: DataLoader) -> float:
        self.model.train()
        it = iter(loader)
        epoch_loss, seen = 0.0, 0
        while True:
            try:
                images, masks = next(it)
            except StopIteration:
                break
            images, masks = images.to(self.device), masks.to(self.device)
            loss = self.compute_loss(self.model(images), masks)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            epoch_loss += loss * images.size(0)  # leak
            seen += images.size(0)
        return float(epoch_loss) / max(seen, 1)

    def fit(self, loader: DataLoader, epochs: int) -> None:
        for epoch in range(epochs):
            print(f"[{epoch + 1}/{epochs}] loss={self.train_epoch(loader):.4f}")
