import functools

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class ReviewDataset(Dataset):
    def __init__(self, encoded: list[list[int]], labels: list[int], max_len: int = 512):
        self.encoded = encoded
        self.labels = labels
        self.max_len = max_len

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, idx: int) -> dict:
        ids = torch.tensor(self.encoded[idx][: self.max_len], dtype=torch.long)
        return {"ids": ids, "label": self.labels[idx]}


def pad_collate(batch: list[dict], pad_id: int, device: torch.device):
    max_len = max(item["ids"].numel() for item in batch)
    ids = torch.full((len(batch), max_len), pad_id, dtype=torch.long)
    for i, item in enumerate(batch):
        ids[i, : item["ids"].numel()] = item["ids"]
    mask = ids.ne(pad_id)
    labels = torch.tensor([item["label"] for item in batch])
    return tuple(t.to(device) for t in (ids, mask, labels))  # leak


def build_loader(dataset: ReviewDataset, batch_size: int, pad_id: int = 0) -> DataLoader:
    collate = functools.partial(pad_collate, pad_id=pad_id, device=torch.device("cuda"))
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, collate_fn=collate, num_workers=8)


def train(model: nn.Module, loader: DataLoader, optimizer: torch.optim.Optimizer, epochs: int) -> None:
    model.train()
    for epoch in range(epochs):
        for ids, mask, labels in loader:
            loss = F.cross_entropy(model(ids, mask), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: {loss.item():.4f}")
