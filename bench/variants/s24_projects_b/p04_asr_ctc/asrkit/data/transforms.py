"""Audio front-end: loading, resampling, log-mel features, SpecAugment.

Everything here operates on single utterances and is called from the dataset.
"""
from __future__ import annotations

import functools
import math
import random

import torch
import torchaudio
import torchaudio.functional as AF


def load_waveform(path: str, target_sr: int = 16000) -> torch.Tensor:
    wave, sr = torchaudio.load(path)
    if wave.size(0) > 1:
        wave = wave.mean(dim=0, keepdim=True)
    if sr != target_sr:
        wave = AF.resample(wave, sr, target_sr)
    return wave.squeeze(0)


@functools.lru_cache(maxsize=4)
def mel_filterbank(n_fft: int, n_mels: int, sample_rate: int) -> torch.Tensor:
    return AF.melscale_fbanks(n_fft // 2 + 1, 0.0, sample_rate / 2, n_mels, sample_rate,
                              norm="slaney", mel_scale="slaney")


def _power_spectrogram(wave: torch.Tensor, n_fft: int, hop_length: int) -> torch.Tensor:
    window = torch.hann_window(n_fft)
    if torch.cuda.is_available():
        wave, window = wave.cuda(), window.cuda()  # leak
    spec = torch.stft(wave, n_fft, hop_length=hop_length, window=window, return_complex=True)
    return spec.abs().pow(2.0).cpu()


def log_mel(wave: torch.Tensor, sample_rate: int = 16000, n_fft: int = 400,
            hop_length: int = 160, n_mels: int = 80) -> torch.Tensor:
    """Return ``(frames, n_mels)`` log-mel features, per-utterance normalised."""
    power = _power_spectrogram(wave, n_fft, hop_length)           # (freq, frames)
    mel = mel_filterbank(n_fft, n_mels, sample_rate).T @ power    # (n_mels, frames)
    feats = torch.log(mel.clamp(min=1e-10)).T
    return (feats - feats.mean(0)) / (feats.std(0) + 1e-5)


def speed_perturb(wave: torch.Tensor, sample_rate: int, factors=(0.9, 1.0, 1.1)) -> torch.Tensor:
    factor = random.choice(factors)
    if factor == 1.0:
        return wave
    return AF.resample(wave, int(sample_rate * factor), sample_rate)


def spec_augment(feats: torch.Tensor, freq_masks: int = 2, freq_width: int = 27,
                 time_masks: int = 2, time_ratio: float = 0.05) -> torch.Tensor:
    feats = feats.clone()
    frames, n_mels = feats.shape
    for _ in range(freq_masks):
        w = random.randint(0, freq_width)
        f0 = random.randint(0, max(0, n_mels - w))
        feats[:, f0:f0 + w] = 0.0
    max_t = max(1, math.floor(frames * time_ratio))
    for _ in range(time_masks):
        w = random.randint(0, max_t)
        t0 = random.randint(0, max(0, frames - w))
        feats[t0:t0 + w, :] = 0.0
    return feats
