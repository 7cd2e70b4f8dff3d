import logging
import os
import time
from typing import Callable, List

import torch
from torch.utils.tensorboard import SummaryWriter

log = logging.getLogger(__name__)


class DeferredLogger:
    """Tensorboard logger that does not force a device sync every step.

    Scalar writes are queued as callables and only materialised (``float()``)
    when the queue is drained (every ``flush_every`` scalars), so the training
    loop only waits on the GPU once in a while.
    """

    def __init__(self, log_dir: str, run_name: str = "", flush_every: int = 256) -> None:
        self.flush_every = flush_every
        self.log_dir = os.path.join(log_dir, run_name or time.strftime("%Y%m%d-%H%M%S"))
        os.makedirs(self.log_dir, exist_ok=True)
        self.writer = SummaryWriter(self.log_dir)
        self._pending: List[Callable[[], None]] = []
        self._text: List[str] = []

    def scalar(self, tag: str, value, step: int) -> None:
        if isinstance(value, torch.Tensor):
            value = value.detach()
        self._pending.append(lambda t=tag, v=value, s=step: self.writer.add_scalar(t, float(v), s))
        if len(self._pending) >= self.flush_every:
            self.flush()

    def scalars(self, values: dict, step: int, prefix: str = "") -> None:
        for k, v in values.items():
            self.scalar(f"{prefix}{k}", v, step)

    def text(self, msg: str) -> None:
        log.info(msg)
        self._text.append(msg)

    def flush(self) -> None:
        for fn in self._pending:
            fn()
        self._pending.clear()
        if self._text:
            self.writer.add_text("notes", "\n\n".join(self._text))
            self._text.clear()
        self.writer.flush()

    def close(self) -> None:
        self.flush()
        self.writer.close()

    def __enter__(self) -> "DeferredLogger":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
