"""Log-mel features (CPU, used in the Dataset) and SpecAugment (GPU, used in the model step)."""
import functools
import math

import torch
import torchaudio


@functools.lru_cache(maxsize=8)
def mel_filterbank(sample_rate: int, n_fft: int, n_mels: int) -> torch.Tensor:
    """(n_freqs, n_mels) triangular filters; keyed only by ints so the cache stays tiny."""
    return torchaudio.functional.melscale_fbanks(
        n_freqs=n_fft // 2 + 1, f_min=20.0, f_max=sample_rate / 2, n_mels=n_mels,
        sample_rate=sample_rate, norm="slaney", mel_scale="slaney",
    )


@functools.lru_cache(maxsize=8)
def hann(n_fft: int) -> torch.Tensor:
    return torch.hann_window(n_fft)


def log_mel(wav: torch.Tensor, sample_rate: int = 16000, n_fft: int = 400, hop: int = 160,
            n_mels: int = 80) -> torch.Tensor:
    """wav: (T,) float on CPU -> (frames, n_mels)."""
    spec = torch.stft(wav, n_fft, hop, window=hann(n_fft), return_complex=True).abs().pow(2)
    mel = spec.transpose(0, 1) @ mel_filterbank(sample_rate, n_fft, n_mels)
    return torch.log(mel.clamp_min(1e-10))


def utterance_cmvn(feats: torch.Tensor) -> torch.Tensor:
    return (feats - feats.mean(0, keepdim=True)) / (feats.std(0, keepdim=True) + 1e-5)


def spec_augment(feats: torch.Tensor, lengths: torch.Tensor, n_freq_masks: int = 2, freq_width: int = 27,
                 n_time_masks: int = 10, time_ratio: float = 0.05, device="cuda") -> torch.Tensor:
    """Batched SpecAugment on (B, T, F) features already on the accelerator."""
    B, T, F_ = feats.shape
    out = feats.clone()
    ar_f = torch.arange(F_, device=device)[None, :]
    ar_t = torch.arange(T, device=device)[None, :]
    for _ in range(n_freq_masks):
        w = torch.randint(0, freq_width + 1, (B, 1), device=device)
        f0 = (torch.rand(B, 1, device=device) * (F_ - w)).long()
        mask = (ar_f >= f0) & (ar_f < f0 + w)
        out = out.masked_fill(mask[:, None, :], 0.0)
    max_w = (lengths.to(device).float() * time_ratio).clamp_min(1).long()[:, None]
    for _ in range(n_time_masks):
        w = (torch.rand(B, 1, device=device) * max_w).long()
        t0 = (torch.rand(B, 1, device=device) * (lengths.to(device)[:, None] - w).clamp_min(1)).long()
        mask = (ar_t >= t0) & (ar_t < t0 + w)
        out = out.masked_fill(mask[:, :, None], 0.0)
    return out


def frames_for(num_samples: int, hop: int = 160) -> int:
    return int(math.floor(num_samples / hop)) + 1
