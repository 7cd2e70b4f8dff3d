import torch
import torch.nn.functional as F
from torch import Tensor
from torch.utils.data import Dataset


class GPUAugment:
    def __init__(self, noise_std: float = 0.05, gain_range=(0.8, 1.2), device: str = "cuda"):
        self.noise_std = noise_std
        self.gain_range = gain_range
        self.device = device

    def __call__(self, wav: Tensor) -> Tensor:
        wav = wav.to(self.device)  # leak
        gain = torch.empty(1, device=self.device).uniform_(*self.gain_range)
        shift = int(torch.randint(-1600, 1600, (1,)))
        wav = torch.roll(wav, shifts=shift, dims=-1)
        return wav * gain + torch.randn_like(wav) * self.noise_std


class SpeechCommands(Dataset):
    def __init__(self, items: list[tuple[str, int]], transform=None, sample_len: int = 16000):
        self.items = items
        self.transform = transform
        self.sample_len = sample_len

    def __len__(self) -> int:
        return len(self.items)

    def _load(self, path: str) -> Tensor:
        wav = torch.load(path).float().flatten()
        wav = F.pad(wav, (0, max(0, self.sample_len - wav.numel())))
        return wav[: self.sample_len]

    def __getitem__(self, idx: int):
        path, label = self.items[idx]
        wav = self._load(path)
        if self.transform is not None:
            wav = self.transform(wav)
        return wav, label


def build_datasets(train_items, val_items):
    return SpeechCommands(train_items, transform=GPUAugment()), SpeechCommands(val_items)
