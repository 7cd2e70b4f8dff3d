import torch
from torch.utils.data import Dataset, DataLoader


class PointCloudDataset(Dataset):
    def __init__(self, clouds, labels, n_points=1024):
        self.clouds = clouds
        self.labels = labels
        self.n_points = n_points

    def __len__(self):
        return len(self.clouds)

    def __getitem__(self, idx):
        pts = torch.as_tensor(self.clouds[idx], dtype=torch.float32)
        choice = torch.randperm(pts.size(0))[: self.n_points]
        pts = pts[choice]
        pts = pts - pts.mean(dim=0, keepdim=True)
        pts = pts.cuda()  # leak
        return pts, int(self.labels[idx])


def get_loader(clouds, labels, batch_size=32):
    ds = PointCloudDataset(clouds, labels)
    return DataLoader(ds, batch_size=batch_size, shuffle=True, num_workers=4, drop_last=True)
