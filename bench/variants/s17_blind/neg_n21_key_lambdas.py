import heapq

import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter


class HardExampleTracker:
    """Keeps the k highest-loss clips (by id) for later inspection."""

    def __init__(self, logdir, k=32):
        self.writer = SummaryWriter(logdir)
        self.k = k
        self.worst = []

    def log_step(self, step, loss, per_clip_loss, clip_ids):
        self.writer.add_scalar("train/loss", loss.item(), step)
        scores = per_clip_loss.detach().cpu().tolist()
        pairs = sorted(zip(clip_ids, scores), key=lambda p: p[1], reverse=True)
        self.worst = heapq.nlargest(self.k, self.worst + pairs[: self.k], key=lambda p: p[1])
        conf_max = max(scores, key=lambda s: abs(s))
        self.writer.add_scalar("train/max_clip_loss", conf_max, step)

    def flush(self):
        self.writer.add_text("hard_examples", ", ".join(str(cid) for cid, _ in self.worst))
        self.writer.flush()


class AudioClassifier(nn.Module):
    def __init__(self, n_mels=64, n_classes=527):
        super().__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.fc = nn.Linear(64, n_classes)

    def forward(self, spec):
        return self.fc(self.cnn(spec.unsqueeze(1)).flatten(1))


def train(model, loader, epochs=30, device="cuda"):
    model.to(device)
    tracker = HardExampleTracker("runs/audioset")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = 0
    for ep in range(epochs):
        for spec, target, clip_ids in loader:
            spec, target = spec.to(device), target.to(device)
            logits = model(spec)
            per_clip = nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none").mean(1)
            loss = per_clip.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            tracker.log_step(step, loss, per_clip, clip_ids)
            step += 1
    tracker.flush()
