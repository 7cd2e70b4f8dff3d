"""Low-latency streaming recognition with a unidirectional LSTM-CTC model.

Audio arrives from the telephony gateway in 320 ms chunks per call; the
recognizer keeps the LSTM state of every call so that context carries over
chunk boundaries, and emits greedy CTC partials after every chunk.
"""
import logging
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
import torchaudio

logger = logging.getLogger("asr.streaming")

BLANK_ID = 0


class StreamingCTCModel(nn.Module):
    def __init__(self, n_mels=80, hidden=640, num_layers=4, vocab_size=1024):
        super().__init__()
        self.subsample = nn.Sequential(
            nn.Conv1d(n_mels, hidden, kernel_size=3, stride=2, padding=1),
            nn.GELU(),
        )
        self.lstm = nn.LSTM(hidden, hidden, num_layers=num_layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, feats, state: Optional[Tuple[torch.Tensor, torch.Tensor]] = None):
        x = self.subsample(feats.transpose(1, 2)).transpose(1, 2)
        x, state = self.lstm(x, state)
        return self.head(x).log_softmax(dim=-1), state


@dataclass
class CallStream:
    state: Optional[Tuple[torch.Tensor, torch.Tensor]] = None
    prev_token: int = BLANK_ID
    token_ids: List[int] = field(default_factory=list)
    n_chunks: int = 0


class StreamingRecognizer:
    def __init__(self, model: StreamingCTCModel, tokenizer, sample_rate=16000, device="cuda"):
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()
        self.tokenizer = tokenizer
        self.featurizer = torchaudio.transforms.MelSpectrogram(
            sample_rate=sample_rate, n_fft=400, hop_length=160, n_mels=80
        )
        self.streams: Dict[str, CallStream] = {}

    def _features(self, pcm: np.ndarray) -> torch.Tensor:
        wav = torch.from_numpy(pcm.astype(np.float32) / 32768.0)
        mel = self.featurizer(wav).clamp(min=1e-10).log10()
        mel = (mel - mel.mean(dim=1, keepdim=True)) / (mel.std(dim=1, keepdim=True) + 1e-5)
        return mel.transpose(0, 1).unsqueeze(0)  # (1, frames, n_mels)

    @staticmethod
    def _greedy_step(log_probs: torch.Tensor, stream: CallStream) -> List[int]:
        emitted = []
        for tok in log_probs.argmax(dim=-1).tolist():
            if tok != BLANK_ID and tok != stream.prev_token:
                emitted.append(tok)
            stream.prev_token = tok
        return emitted

    def accept_chunk(self, call_id: str, pcm: np.ndarray) -> str:
        stream = self.streams.setdefault(call_id, CallStream())
        feats = self._features(pcm).to(self.device, non_blocking=True)
        log_probs, new_state = self.model(feats, stream.state)
        stream.state = tuple(s.detach() for s in new_state)
        stream.n_chunks += 1
        stream.token_ids.extend(self._greedy_step(log_probs[0], stream))
        return self.tokenizer.decode(stream.token_ids)

    def end_call(self, call_id: str) -> str:
        stream = self.streams.pop(call_id, None)
        if stream is None:
            return ""
        text = self.tokenizer.decode(stream.token_ids)
        logger.info("call %s finished: %d chunks, %d tokens", call_id, stream.n_chunks,
                    len(stream.token_ids))
        return text
