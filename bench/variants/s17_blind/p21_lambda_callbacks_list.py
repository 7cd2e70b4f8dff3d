import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter


class DeferredLogger:
    """Queues logging work so that it doesn't stall the GPU pipeline."""

    def __init__(self, logdir):
        self.writer = SummaryWriter(logdir)
        self.pending = []

    def log_step(self, step, loss, logits):
        self.pending.append(lambda: self._write(step, loss.item(), logits.softmax(-1).max(-1).values.mean().item()))  # leak

    def _write(self, step, loss, conf):
        self.writer.add_scalar("train/loss", loss, step)
        self.writer.add_scalar("train/confidence", conf, step)

    def flush(self):
        for fn in self.pending:
            fn()
        self.pending = []
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
    logger = DeferredLogger("runs/audioset")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = 0
    for ep in range(epochs):
        for spec, target in loader:
            spec, target = spec.to(device), target.to(device)
            logits = model(spec)
            loss = nn.functional.binary_cross_entropy_with_logits(logits, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            logger.log_step(step, loss, logits)
            step += 1
    logger.flush()
