"""Video clip classification: dataset decodes frames, resizing and normalisation run on the GPU."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

MEAN = (0.45, 0.45, 0.45)
STD = (0.225, 0.225, 0.225)


class ClipDataset(Dataset):
    def __init__(self, index, num_frames=16):
        self.index = index  # list of (npy_path, label)
        self.num_frames = num_frames

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
        return torch.from_numpy(clip), label


class GPUClipTransform(nn.Module):
    def __init__(self, size=224):
        super().__init__()
        self.size = size
        self.register_buffer("mean", torch.tensor(MEAN).view(1, 3, 1, 1, 1))
        self.register_buffer("std", torch.tensor(STD).view(1, 3, 1, 1, 1))

    @torch.no_grad()
    def forward(self, clips):
        # clips: [B, T, H, W, 3] uint8 on the GPU
        clips = clips.permute(0, 4, 1, 2, 3).float().div_(255)
        b, c, t, h, w = clips.shape
        clips = F.interpolate(clips.reshape(b, c * t, h, w), size=(self.size, self.size),
                              mode="bilinear", align_corners=False).reshape(b, c, t, self.size, self.size)
        return (clips - self.mean) / self.std


def train(model, index, epochs=30, batch_size=8, lr=1e-3, device="cuda"):
    dataset = ClipDataset(index)
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=6, drop_last=True,
                        pin_memory=True, persistent_workers=True)
    gpu_tf = GPUClipTransform().to(device)
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        model.train()
        for step, (clips, labels) in enumerate(loader):
            clips = gpu_tf(clips.to(device, non_blocking=True))
            labels = labels.to(device, non_blocking=True)
            loss = criterion(model(clips), labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % 50 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        sched.step()
        torch.save(model.state_dict(), f"clip_model_{epoch}.pt")
