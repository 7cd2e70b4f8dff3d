import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class FeatureDataset(Dataset):
    def __init__(self, path: str, device: str = "cuda"):
        blob = torch.load(path, map_location="cpu")
        self.features = blob["features"]
        self.labels = blob["labels"]
        self.device = device

    def __len__(self) -> int:
        return self.labels.numel()

    def __getitem__(self, idx: int):
        x = self.features[idx].to(self.device, non_blocking=True)  # leak
        y = self.labels[idx]
        return x, y


def build_loaders(train_path: str, val_path: str, batch_size: int = 256):
    train_ds = FeatureDataset(train_path)
    val_ds = FeatureDataset(val_path)
    train_loader = DataLoader(train_ds, batch_size=batch_size, shuffle=True, num_workers=4,
                              persistent_workers=True, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=batch_size, num_workers=4)
    return train_loader, val_loader


def train_linear_probe(train_path: str, val_path: str, num_classes: int, epochs: int = 90) -> float:
    train_loader, val_loader = build_loaders(train_path, val_path)
    probe = nn.Linear(train_loader.dataset.features.size(1), num_classes).cuda()
    optimizer = torch.optim.SGD(probe.parameters(), lr=0.1, momentum=0.9)
    for _ in range(epochs):
        for x, y in train_loader:
            loss = F.cross_entropy(probe(x), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    correct = total = 0
    with torch.no_grad():
        for x, y in val_loader:
            correct += (probe(x).argmax(1).cpu() == y).sum().item()
            total += y.numel()
    return correct / total
