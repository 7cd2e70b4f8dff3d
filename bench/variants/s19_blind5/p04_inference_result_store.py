"""Request batching front-end for the model server.

Requests are queued by :meth:`BatchingHandler.submit`, grouped into batches by
:meth:`BatchingHandler.step` and their results made available through
:meth:`BatchingHandler.poll`.  Clients poll with the request id they were
given; polling is idempotent so retries after a dropped connection work.
"""
from __future__ import annotations

import itertools
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import torch
from torch import nn

LOG = logging.getLogger("serving.batching")


@dataclass
class _PendingRequest:
    request_id: str
    inputs: torch.Tensor
    arrived: float = field(default_factory=time.monotonic)


class _ResultStore:
    """Holds finished outputs until the client comes back for them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._results: Dict[str, torch.Tensor] = {}

    def put(self, request_id: str, output: torch.Tensor) -> None:
        with self._lock:
            self._results[request_id] = output  # leak

    def get(self, request_id: str) -> Optional[torch.Tensor]:
        with self._lock:
            return self._results.get(request_id)

    def __len__(self) -> int:
        return len(self._results)


class BatchingHandler:
    def __init__(self, model: nn.Module, max_batch_size: int = 32, max_wait_ms: float = 5.0,
                 device: Optional[str] = None) -> None:
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model = model.to(self.device).eval()
        self.max_batch_size = max_batch_size
        self.max_wait_s = max_wait_ms / 1000.0
        self._queue: List[_PendingRequest] = []
        self._queue_lock = threading.Lock()
        self._ids = itertools.count()
        self._store = _ResultStore()

    def submit(self, inputs: torch.Tensor) -> str:
        rid = f"req-{next(self._ids)}"
        with self._queue_lock:
            self._queue.append(_PendingRequest(rid, inputs))
        return rid

    def _take_batch(self) -> List[_PendingRequest]:
        with self._queue_lock:
            if not self._queue:
                return []
            oldest = self._queue[0].arrived
            if len(self._queue) < self.max_batch_size and time.monotonic() - oldest < self.max_wait_s:
                return []
            batch, self._queue = self._queue[: self.max_batch_size], self._queue[self.max_batch_size:]
        return batch

    @torch.inference_mode()
    def _run(self, batch: List[_PendingRequest]) -> torch.Tensor:
        x = torch.stack([r.inputs for r in batch]).to(self.device, non_blocking=True)
        return self.model(x).softmax(dim=-1)

    def step(self) -> int:
        batch = self._take_batch()
        if not batch:
            return 0
        probs = self._run(batch)
        for req, row in zip(batch, probs):
            self._store.put(req.request_id, row)
        LOG.debug("served %d requests, store size %d", len(batch), len(self._store))
        return len(batch)

    def poll(self, request_id: str) -> Optional[List[float]]:
        out = self._store.get(request_id)
        return None if out is None else out.tolist()

    def serve_forever(self, stop: threading.Event, idle_sleep: float = 0.001) -> None:
        while not stop.is_set():
            if not self.step():
                time.sleep(idle_sleep)


def _load_demo_model(num_features: int = 64, num_classes: int = 10) -> nn.Module:
    return nn.Sequential(nn.Linear(num_features, 256), nn.GELU(), nn.Linear(256, num_classes))


if __name__ == "__main__":
    logging.basicConfig(level=logging.DEBUG)
    handler = BatchingHandler(_load_demo_model())
    stop_evt = threading.Event()
    worker = threading.Thread(target=handler.serve_forever, args=(stop_evt,), daemon=True)
    worker.start()
    for _ in range(10_000):
        rid = handler.submit(torch.randn(64))
        result = None
        while result is None:
            result = handler.poll(rid)
    stop_evt.set()
