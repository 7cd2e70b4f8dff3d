import torch
from torch.utils.data import Dataset


class FeatureDataset(Dataset):
    def __init__(self, paths, device="cuda"):
        self.paths = paths
        self.device = device

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        x = torch.load(self.paths[i])
        return x.to(self.device)  # leak
