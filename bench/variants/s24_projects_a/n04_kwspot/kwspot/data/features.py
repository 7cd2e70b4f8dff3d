"""Log-mel feature extraction.

Features are computed on the accelerator when one is available; callers are
responsible for keeping data loading in the main process in that case.
"""
import math
from functools import lru_cache

import torch
import torch.nn.functional as F

SAMPLE_RATE = 16000


def _hz_to_mel(f: float) -> float:
    return 2595.0 * math.log10(1.0 + f / 700.0)


def _mel_to_hz(m: torch.Tensor) -> torch.Tensor:
    return 700.0 * (10 ** (m / 2595.0) - 1.0)


@lru_cache(maxsize=8)
def mel_filterbank(n_fft: int, n_mels: int, sample_rate: int = SAMPLE_RATE) -> torch.Tensor:
    """Triangular mel filters, shape (n_mels, n_fft // 2 + 1). Cached per config."""
    n_freqs = n_fft // 2 + 1
    freqs = torch.linspace(0, sample_rate / 2, n_freqs)
    mels = torch.linspace(_hz_to_mel(0.0), _hz_to_mel(sample_rate / 2), n_mels + 2)
    hz = _mel_to_hz(mels)
    fb = torch.zeros(n_mels, n_freqs)
    for m in range(1, n_mels + 1):
        left, center, right = hz[m - 1], hz[m], hz[m + 1]
        up = (freqs - left) / (center - left)
        down = (right - freqs) / (right - center)
        fb[m - 1] = torch.clamp(torch.minimum(up, down), min=0)
    return fb


def pad_or_trim(wave: torch.Tensor, length: int = SAMPLE_RATE) -> torch.Tensor:
    if wave.shape[-1] >= length:
        return wave[..., :length]
    return F.pad(wave, (0, length - wave.shape[-1]))


def log_mel(wave: torch.Tensor, device: torch.device, n_fft: int = 480, hop: int = 160,
            n_mels: int = 40) -> torch.Tensor:
    """(1, T) waveform -> (n_mels, frames) log-mel spectrogram on ``device``."""
    wave = pad_or_trim(wave).to(device)
    window = torch.hann_window(n_fft, device=device)
    spec = torch.stft(wave[0], n_fft, hop, window=window, return_complex=True).abs().pow(2)
    fb = mel_filterbank(n_fft, n_mels).to(device)
    return torch.log(fb @ spec + 1e-6)
