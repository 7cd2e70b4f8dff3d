"""Online action detection on long untrimmed videos with a ConvLSTM head.

Streams are cut into consecutive chunks; each batch slot always carries the
same stream, so the recurrent state is handed from one chunk to the next and
zeroed where a new video starts.
"""
import logging
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)

State = Tuple[torch.Tensor, torch.Tensor]


class ConvLSTMCell(nn.Module):
    def __init__(self, in_ch: int, hid_ch: int, k: int = 3):
        super().__init__()
        self.hid_ch = hid_ch
        self.gates = nn.Conv2d(in_ch + hid_ch, 4 * hid_ch, k, padding=k // 2)

    def forward(self, x, state: Optional[State]):
        if state is None:
            z = x.new_zeros(x.shape[0], self.hid_ch, *x.shape[-2:])
            state = (z, z)
        h, c = state
        i, f, o, g = self.gates(torch.cat([x, h], 1)).chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, (h, c)


class OnlineDetector(nn.Module):
    def __init__(self, backbone: nn.Module, feat_ch: int, hid_ch: int, num_classes: int):
        super().__init__()
        self.backbone = backbone
        self.cell = ConvLSTMCell(feat_ch, hid_ch)
        self.head = nn.Linear(hid_ch, num_classes)

    def forward(self, clip, state: Optional[State] = None):
        # clip: (B, T, 3, H, W) -> per-frame logits (B, T, C)
        B, T = clip.shape[:2]
        feats = self.backbone(clip.flatten(0, 1)).unflatten(0, (B, T))
        logits = []
        for t in range(T):
            h, state = self.cell(feats[:, t], state)
            logits.append(self.head(h.mean(dim=(-2, -1))))
        return torch.stack(logits, 1), state


def reset_finished(state: Optional[State], new_video: torch.Tensor) -> Optional[State]:
    if state is None:
        return None
    keep = (~new_video).float().view(-1, 1, 1, 1)
    return tuple(s * keep for s in state)


class OnlineRunner:
    """Consumes consecutive chunks of one or more live streams and emits action onsets."""

    def __init__(self, model, cfg, class_names):
        self.model = model.cuda().eval()
        self.cfg = cfg
        self.class_names = class_names
        self.threshold = cfg.get("threshold", 0.6)
        self.state: Optional[State] = None
        self.active = None
        self.frames_seen = 0

    def load(self, ckpt_path):
        sd = torch.load(ckpt_path, map_location="cpu")
        self.model.load_state_dict(sd.get("model", sd))
        logger.info("loaded %s", ckpt_path)

    def process(self, clip, new_video):
        clip = clip.cuda(non_blocking=True)
        new_video = new_video.cuda(non_blocking=True)
        state = reset_finished(self.state, new_video)
        logits, next_state = self.model(clip, state)
        self.state = next_state  # leak
        probs = logits.softmax(-1)
        return self._emit(probs.detach().cpu())

    def _emit(self, probs):
        events = []
        B, T, _ = probs.shape
        if self.active is None:
            self.active = [-1] * B
        conf, cls = probs.max(-1)
        for b in range(B):
            for t in range(T):
                c = int(cls[b, t]) if float(conf[b, t]) >= self.threshold else -1
                if c != self.active[b] and c > 0:
                    events.append({"stream": b, "frame": self.frames_seen + t,
                                   "action": self.class_names[c], "score": float(conf[b, t])})
                self.active[b] = c
        self.frames_seen += T
        return events

    def run(self, chunk_source, sink):
        for clip, new_video in chunk_source:
            for ev in self.process(clip, new_video):
                sink(ev)
            if self.frames_seen % self.cfg.get("log_every", 10_000) < clip.shape[1]:
                logger.info("processed %d frames", self.frames_seen)
