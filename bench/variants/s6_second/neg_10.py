import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader, Dataset


class PatchDataset(Dataset):
    def __init__(self, volumes: list[Tensor], labels: list[Tensor], patch: int = 64):
        self.volumes = volumes
        self.labels = labels
        self.patch = patch

    def __len__(self) -> int:
        return len(self.volumes)

    def __getitem__(self, idx: int) -> tuple[Tensor, Tensor]:
        vol, lab = self.volumes[idx], self.labels[idx]
        d, h, w = vol.shape[-3:]
        z, y, x = (int(torch.randint(0, s - self.patch + 1, (1,))) for s in (d, h, w))
        sl = (..., slice(z, z + self.patch), slice(y, y + self.patch), slice(x, x + self.patch))
        return vol[sl].float(), lab[sl].long()


def train(model: nn.Module, dataset: PatchDataset, epochs: int, device: torch.device,
          batch_size: int = 4) -> None:
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=6,
                        pin_memory=True, persistent_workers=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    model.to(device).train()
    for epoch in range(epochs):
        for volume, target in loader:
            volume = volume.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            loss = F.cross_entropy(model(volume), target)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: {loss.item():.4f}")
