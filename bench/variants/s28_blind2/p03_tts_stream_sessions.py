"""Incremental text-to-speech: acoustic model + neural vocoder, streamed per sentence.

Clients open a session, push text as it arrives from the LLM, and receive PCM
chunks back. The last few mel frames of every push are held back and
cross-faded with the next one so that sentence boundaries don't click.
"""
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional

import numpy as np
import torch

logger = logging.getLogger("tts.stream")


@dataclass
class SessionState:
    speaker_id: int
    created: float = field(default_factory=time.monotonic)
    tail: Optional[torch.Tensor] = None
    n_pushes: int = 0


class StreamingSynthesizer:
    def __init__(self, frontend, acoustic_model, vocoder, hop_length=256, overlap_frames=8,
                 device="cuda"):
        self.frontend = frontend
        self.acoustic = acoustic_model.to(device).eval()
        self.vocoder = vocoder.to(device).eval()
        self.hop_length = hop_length
        self.overlap = overlap_frames
        self.device = torch.device(device)
        self._sessions: Dict[str, SessionState] = {}
        self._finalizers: Dict[str, Callable[[], np.ndarray]] = {}

    def open(self, speaker_id: int = 0) -> str:
        session_id = uuid.uuid4().hex
        self._sessions[session_id] = SessionState(speaker_id=speaker_id)
        logger.debug("opened session %s (speaker=%d)", session_id, speaker_id)
        return session_id

    def _to_pcm(self, mel: torch.Tensor) -> np.ndarray:
        audio = self.vocoder(mel).squeeze()
        audio = torch.clamp(audio, -1.0, 1.0)
        return (audio * 32767.0).to(torch.int16).cpu().numpy()

    @torch.inference_mode()
    def _render_tail(self, tail: torch.Tensor) -> np.ndarray:
        fade = torch.linspace(1.0, 0.0, tail.shape[-1], device=tail.device)
        return self._to_pcm(tail * fade)

    @torch.inference_mode()
    def push_text(self, session_id: str, text: str) -> np.ndarray:
        state = self._sessions[session_id]
        tokens = torch.as_tensor(self.frontend(text), device=self.device).unsqueeze(0)
        speaker = torch.tensor([state.speaker_id], device=self.device)
        mel = self.acoustic.infer(tokens, speaker_ids=speaker)  # (1, n_mels, frames)
        if state.tail is not None:
            mel = torch.cat([state.tail, mel], dim=-1)
        body, tail = mel[..., : -self.overlap], mel[..., -self.overlap:]
        state.tail = tail
        state.n_pushes += 1
        self._finalizers[session_id] = lambda: self._render_tail(tail)  # leak
        return self._to_pcm(body)

    def close(self, session_id: str) -> np.ndarray:
        state = self._sessions.pop(session_id, None)
        if state is None:
            return np.zeros(0, dtype=np.int16)
        finalize = self._finalizers.get(session_id)
        pcm = finalize() if finalize is not None else np.zeros(0, dtype=np.int16)
        logger.info(
            "closed session %s after %d pushes (%.1fs)",
            session_id, state.n_pushes, time.monotonic() - state.created,
        )
        return pcm

    def active_sessions(self) -> int:
        return len(self._sessions)


def serve_forever(synth: StreamingSynthesizer, queue, send):
    """Consume (kind, session_id, payload) requests from the API layer."""
    while True:
        kind, session_id, payload = queue.get()
        if kind == "open":
            send(session_id, synth.open(int(payload or 0)))
        elif kind == "text":
            send(session_id, synth.push_text(session_id, payload))
        elif kind == "close":
            send(session_id, synth.close(session_id))
