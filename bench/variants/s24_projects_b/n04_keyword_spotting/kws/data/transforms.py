"""Feature extraction and augmentation.

``mfcc_features`` runs per utterance inside DataLoader workers and therefore
stays on the CPU. ``BatchSpecAugment`` is applied by the training loop to a
whole padded batch after it has been moved to the accelerator.
"""
from __future__ import annotations

import random

import torch
import torch.nn as nn
import torchaudio

SAMPLE_RATE = 16000
_MFCC = None


def _mfcc_module(n_mfcc: int) -> torchaudio.transforms.MFCC:
    global _MFCC
    if _MFCC is None or _MFCC.n_mfcc != n_mfcc:
        _MFCC = torchaudio.transforms.MFCC(
            sample_rate=SAMPLE_RATE, n_mfcc=n_mfcc,
            melkwargs={"n_fft": 480, "hop_length": 160, "n_mels": 40})
    return _MFCC


def fix_length(wave: torch.Tensor, length: int = SAMPLE_RATE) -> torch.Tensor:
    if wave.size(-1) < length:
        return torch.nn.functional.pad(wave, (0, length - wave.size(-1)))
    return wave[..., :length]


def time_shift(wave: torch.Tensor, max_ms: int = 100) -> torch.Tensor:
    shift = random.randint(-max_ms, max_ms) * SAMPLE_RATE // 1000
    return torch.roll(wave, shifts=shift, dims=-1)


def mix_noise(wave: torch.Tensor, noise: torch.Tensor, snr_db: float) -> torch.Tensor:
    start = random.randint(0, max(0, noise.size(-1) - wave.size(-1)))
    seg = fix_length(noise[..., start:], wave.size(-1))
    p_sig = wave.pow(2).mean().clamp(min=1e-8)
    p_noise = seg.pow(2).mean().clamp(min=1e-8)
    scale = torch.sqrt(p_sig / (p_noise * 10 ** (snr_db / 10)))
    return wave + scale * seg


def mfcc_features(wave: torch.Tensor, n_mfcc: int = 40) -> torch.Tensor:
    """(1, T) waveform -> (n_mfcc, frames) features, CPU only."""
    with torch.no_grad():
        return _mfcc_module(n_mfcc)(wave).squeeze(0)


class BatchSpecAugment(nn.Module):
    """Frequency/time masking over a (B, F, T) batch, done on-device."""

    def __init__(self, freq_width: int = 8, time_width: int = 20, n_masks: int = 2,
                 device: str = "cuda"):
        super().__init__()
        self.freq_width = freq_width
        self.time_width = time_width
        self.n_masks = n_masks
        self.device = torch.device(device)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return feats
        b, f, t = feats.shape
        fr = torch.arange(f, device=self.device).view(1, f, 1)
        tr = torch.arange(t, device=self.device).view(1, 1, t)
        mask = torch.zeros(b, f, t, dtype=torch.bool, device=self.device)
        for _ in range(self.n_masks):
            f0 = torch.randint(0, f, (b, 1, 1), device=self.device)
            fw = torch.randint(0, self.freq_width + 1, (b, 1, 1), device=self.device)
            t0 = torch.randint(0, t, (b, 1, 1), device=self.device)
            tw = torch.randint(0, self.time_width + 1, (b, 1, 1), device=self.device)
            mask |= (fr >= f0) & (fr < f0 + fw)
            mask |= (tr >= t0) & (tr < t0 + tw)
        return feats.masked_fill(mask, 0.0)
