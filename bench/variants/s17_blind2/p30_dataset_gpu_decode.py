"""Video clip classification: dataset decodes frames and normalises them on the GPU."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

MEAN = (0.45, 0.45, 0.45)
STD = (0.225, 0.225, 0.225)


class ClipDataset(Dataset):
    def __init__(self, index, num_frames=16, size=224, device="cuda"):
        self.index = index  # list of (npy_path, label)
        self.num_frames = num_frames
        self.size = size
        self.device = torch.device(device)
        self.mean = torch.tensor(MEAN).view(3, 1, 1, 1)
        self.std = torch.tensor(STD).view(3, 1, 1, 1)

    def __len__(self):
        return len(self.index)

    def _sample_indices(self, total):
        if total <= self.num_frames:
            return np.arange(self.num_frames) % total
        start = np.random.randint(0, total - self.num_frames)
        return np.arange(start, start + self.num_frames)

    def __getitem__(self, idx):
        path, label = self.index[idx]
        frames = np.load(path, mmap_mode="r")  # [T, H, W, 3] uint8
        clip = np.ascontiguousarray(frames[self._sample_indices(len(frames))])
        clip = torch.from_numpy(clip).to(self.device, non_blocking=True)  # leak
        clip = clip.permute(3, 0, 1, 2).float().div_(255)
        clip = F.interpolate(clip, size=(self.size, self.size), mode="bilinear", align_corners=False)
        clip = (clip - self.mean.to(clip.device)) / self.std.to(clip.device)
        return clip, label


def train(model, index, epochs=30, batch_size=8, lr=1e-3, device="cuda"):
    dataset = ClipDataset(index, device=device)
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=6, drop_last=True,
                        multiprocessing_context="spawn", persistent_workers=True)
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        model.train()
        for step, (clips, labels) in enumerate(loader):
            clips = clips.to(device)
            labels = labels.to(device)
            loss = criterion(model(clips), labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % 50 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        sched.step()
        torch.save(model.state_dict(), f"clip_model_{epoch}.pt")
