import torch
from torch.utils.data import DataLoader, Dataset


class DS(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self._load(i)

    def _load(self, i):
        return torch.randn(3, device="cuda")  # leak


loader = DataLoader(DS(10), batch_size=2, num_workers=4)
