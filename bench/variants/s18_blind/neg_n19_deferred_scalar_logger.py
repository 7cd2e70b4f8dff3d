"""Deferred TensorBoard logging.

Calling ``.item()`` on every logged scalar forces a host/device sync each
step. ``LazySummaryWriter`` records *how* to log a value and only resolves
the values every ``flush_every`` records, so the training loop only syncs
occasionally. Values are detached before being queued.

The writer itself never touches tensors directly; it works with anything
that ``float()`` understands.
"""
import logging
import os
import time
from typing import Callable, List, Optional

from torch.utils.tensorboard import SummaryWriter

logger = logging.getLogger(__name__)


class LazySummaryWriter:
    def __init__(self, log_dir: str, enabled: bool = True, flush_every: int = 200):
        self.enabled = enabled
        self.flush_every = flush_every
        self._writer: Optional[SummaryWriter] = SummaryWriter(log_dir) if enabled else None
        self._pending: List[Callable[[], None]] = []
        self._last_flush = time.time()

    def scalar(self, tag, value, step):
        if not self.enabled:
            return
        if hasattr(value, "detach"):
            value = value.detach()
        self._pending.append(lambda: self._writer.add_scalar(tag, float(value), step))
        if len(self._pending) >= self.flush_every:
            self.flush()

    def scalars(self, prefix, values: dict, step):
        for k, v in values.items():
            self.scalar(f"{prefix}/{k}", v, step)

    def text(self, tag, s, step):
        if self.enabled:
            self._writer.add_text(tag, s, step)

    def flush(self):
        if not self.enabled:
            return
        n = len(self._pending)
        for fn in self._pending:
            fn()
        self._pending.clear()
        self._writer.flush()
        logger.debug("flushed %d deferred scalars in %.2fs", n, time.time() - self._last_flush)
        self._last_flush = time.time()

    def close(self):
        self.flush()
        if self._writer is not None:
            self._writer.close()


def train(model, loader, optimizer, scheduler, epochs, log_dir, grad_clip=1.0, device="cuda"):
    """Minimal loop showing how the writer is used in our scripts."""
    import torch.nn.functional as F
    from torch.nn.utils import clip_grad_norm_

    os.makedirs(log_dir, exist_ok=True)
    tb = LazySummaryWriter(log_dir)
    tb.text("config", f"epochs={epochs} clip={grad_clip}", 0)
    step = 0
    for epoch in range(epochs):
        model.train()
        for images, labels in loader:
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            logits = model(images)
            ce = F.cross_entropy(logits, labels)
            optimizer.zero_grad(set_to_none=True)
            ce.backward()
            gnorm = clip_grad_norm_(model.parameters(), grad_clip)
            optimizer.step()
            scheduler.step()
            tb.scalars("train", {"ce": ce, "grad_norm": gnorm, "lr": scheduler.get_last_lr()[0]}, step)
            step += 1
        logger.info("epoch %d done (%d steps)", epoch, step)
    tb.close()
    return step


if __name__ == "__main__":
    import argparse

    import torch
    import torchvision

    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=90)
    ap.add_argument("--logdir", default="runs/resnet")
    a = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    net = torchvision.models.resnet50().cuda()
    tfm = torchvision.transforms.Compose([torchvision.transforms.RandomResizedCrop(224), torchvision.transforms.ToTensor()])
    ds = torchvision.datasets.ImageFolder("/data/imagenet/train", tfm)
    dl = torch.utils.data.DataLoader(ds, batch_size=256, shuffle=True, num_workers=16, pin_memory=True)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    sch = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.4, total_steps=a.epochs * len(dl))
    train(net, dl, opt, sch, a.epochs, a.logdir)
