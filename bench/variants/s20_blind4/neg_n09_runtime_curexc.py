"""Micro-batching inference runtime.

Requests are grouped into micro-batches, run through the model under
``torch.inference_mode`` and scattered back.  A failing micro-batch must not
take the worker down: its requests get an error response and the runtime keeps
serving.  A description of the last failure is exposed on the runtime context
for the /healthz endpoint.
"""
import dataclasses
import logging
import queue
import threading
import time
import traceback
from typing import Any, Dict, List, Optional

import torch

logger = logging.getLogger("serving.runtime")


@dataclasses.dataclass
class Request:
    rid: str
    pixels: torch.Tensor
    reply: "queue.Queue[Dict[str, Any]]"


class RuntimeContext:
    """Mutable per-worker state shared with the health endpoint."""

    def __init__(self):
        self.served = 0
        self.failed_batches = 0
        self.curexc: Optional[str] = None
        self.last_ok = time.time()

    def health(self) -> Dict[str, Any]:
        return {
            "served": self.served,
            "failed_batches": self.failed_batches,
            "last_error": self.curexc,
            "secs_since_ok": round(time.time() - self.last_ok, 1),
        }


class MicroBatchRuntime:
    def __init__(self, model: torch.nn.Module, device: str = "cuda", max_batch: int = 32, max_wait_ms: float = 5.0):
        self.model = model.to(device).eval()
        self.device = device
        self.max_batch = max_batch
        self.max_wait = max_wait_ms / 1000.0
        self.inbox: "queue.Queue[Request]" = queue.Queue()
        self.ctx = RuntimeContext()
        self._stop = threading.Event()

    def submit(self, rid: str, pixels: torch.Tensor) -> "queue.Queue[Dict[str, Any]]":
        reply: "queue.Queue[Dict[str, Any]]" = queue.Queue(maxsize=1)
        self.inbox.put(Request(rid, pixels, reply))
        return reply

    def _gather(self) -> List[Request]:
        batch = [self.inbox.get()]
        deadline = time.time() + self.max_wait
        while len(batch) < self.max_batch:
            remaining = deadline - time.time()
            if remaining <= 0:
                break
            try:
                batch.append(self.inbox.get(timeout=remaining))
            except queue.Empty:
                break
        return batch

    @torch.inference_mode()
    def _forward(self, reqs: List[Request]) -> torch.Tensor:
        x = torch.stack([r.pixels for r in reqs]).to(self.device, non_blocking=True)
        x = (x.float() / 255.0 - 0.45) / 0.225
        logits = self.model(x)
        return logits.softmax(-1).float().cpu()

    def serve_forever(self):
        while not self._stop.is_set():
            reqs = self._gather()
            try:
                probs = self._forward(reqs)
            except (RuntimeError, ValueError) as exc:
                logger.warning("micro-batch of %d failed: %s", len(reqs), exc)
                # keep only text: the exception's traceback would pin the batch tensors
                self.ctx.curexc = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                self.ctx.failed_batches += 1
                for r in reqs:
                    r.reply.put({"id": r.rid, "error": "inference failed"})
                continue
            top_p, top_i = probs.max(-1)
            for r, p, i in zip(reqs, top_p.tolist(), top_i.tolist()):
                r.reply.put({"id": r.rid, "label": i, "score": p})
            self.ctx.served += len(reqs)
            self.ctx.last_ok = time.time()

    def stop(self):
        self._stop.set()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 224 * 224, 1000))
    rt = MicroBatchRuntime(net, device="cuda" if torch.cuda.is_available() else "cpu")
    threading.Thread(target=rt.serve_forever, daemon=True).start()
    outs = [rt.submit(str(i), torch.randint(0, 255, (3, 224, 224), dtype=torch.uint8)) for i in range(100)]
    print([o.get()["label"] for o in outs][:10], rt.ctx.health())
