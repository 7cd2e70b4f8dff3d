"""The runtime fixtures on a GPU: the table in docs/verifier.md comes from this script.

    python tests/gpu_suite.py OUT.json

Every job runs as `tensorlint verify` runs it (runner.run_job: a fresh subprocess, device
auto). For each it records the ledger's bytes per call next to `torch.cuda.memory_allocated()`'s,
and for TL003 the workers' measured outcome; then the ledger's overhead on a small train step.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from runtime_cases import CASES, planned_job
from tensorlint.verify.runner import run_job

EXTRA = [("tl003_collate_cuda_spawn.py", {"kind": "loader", "name": "load_batches"}, "confirmed", None, "")]


def main(out: str) -> None:
    import torch

    rows: list[dict[str, Any]] = []
    for name, job, expected, _, _ in [*CASES, *EXTRA]:
        verdict = run_job(planned_job(name, job, device="auto"), timeout=180)
        cross = verdict.cross_check
        rows.append(
            {
                "fixture": name,
                "expected_cpu": expected,
                "verdict": verdict.verdict,
                "device": verdict.device,
                "ledger_bytes_per_call": verdict.bytes_per_call,
                "cuda_allocated_per_call": cross.get("cuda_memory_allocated_per_call"),
                "agreement": cross.get("agreement"),
                "graph_nodes_per_call": verdict.graph_nodes_per_call,
                "holder": verdict.holders[0].path if verdict.holders else "",
                "reason": verdict.reason,
                "workers": list(verdict.workers),
                "worker_memory": cross if verdict.mode == "dataloader" else None,
                "seconds": verdict.seconds,
            }
        )
        print(json.dumps(rows[-1])[:600], flush=True)
    result = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "rows": rows,
        "overhead": {d: _overhead(d) for d in (["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])},
    }
    Path(out).write_text(json.dumps(result, indent=2))
    print(json.dumps(result["overhead"]))


def _overhead(device: str, steps: int = 200) -> dict[str, float]:
    """Seconds for `steps` train steps of a small MLP, plain and under the storage ledger."""
    import torch
    from torch import nn

    from tensorlint.verify.ledger import StorageLedger

    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 512, device=device), torch.randint(0, 10, (64,), device=device)

    def run() -> float:
        start = time.perf_counter()
        for _ in range(steps):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        if device == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - start

    run()  # warm-up
    plain = run()
    with StorageLedger() as ledger:
        ledger.recording = True
        ledger_seconds = run()
    return {"plain_s": plain, "ledger_s": ledger_seconds, "ratio": ledger_seconds / plain}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gpu_suite.json")
