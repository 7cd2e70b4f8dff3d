"""The runtime fixtures, measured as `tensorlint verify` measures them: the tables in docs/verifier.md
come from this script, on CPU and on a GPU.

    python tests/gpu_suite.py OUT.json [--fixtures-only]

Every fixture runs as the CLI runs it (runner.run_jobs: one fresh subprocess for the file, device
auto). For each it records the verdict, the ledger's bytes per call, the holder and, on CUDA,
`torch.cuda.memory_allocated()`'s bytes per call next to the ledger's; for TL003 the workers'
outcome. Then the wall time of whole-file verification with one subprocess per target (before)
and one per file (after), the `--run` example scripts, and the ledger's overhead on a train step;
`--fixtures-only` stops after the fixtures (to stay within one device command's time limit).
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import ROOT
from runtime_cases import CASES, planned_job
from tensorlint.verify.runner import run_job, run_jobs

EXTRA = [("tl003_collate_cuda_spawn.py", {"kind": "loader", "name": "load_batches"}, "confirmed", None, "")]
WHOLE_FILES = ["examples/leaky_training.py", "fixtures/runtime/tl003_collate_cuda.py"]
SCRIPTS = sorted(p.name for p in (ROOT / "examples" / "run").glob("*.py"))


def main(out: str, fixtures_only: bool = False) -> None:
    import torch

    rows = [_fixture(name, job, expected) for name, job, expected, _, _ in [*CASES, *EXTRA]]
    result: dict[str, Any] = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "driver": _driver(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "rows": rows,
    }
    if not fixtures_only:
        result["per_file"] = [_per_file(name) for name in WHOLE_FILES]
        result["scripts"] = [_script(name) for name in SCRIPTS]
        devices = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
        result["overhead"] = {d: _overhead(d) for d in devices}
        print(json.dumps({k: result[k] for k in ("per_file", "overhead")}, indent=1))
    Path(out).write_text(json.dumps(result, indent=2))


def _fixture(name: str, job: dict[str, Any], expected: str) -> dict[str, Any]:
    verdict = run_jobs([planned_job(name, job, device="auto")], timeout=300).verdicts[0]
    cross = verdict.cross_check
    row = {
        "fixture": name,
        "expected_cpu": expected,
        "verdict": verdict.verdict,
        "device": verdict.device,
        "ledger_bytes_per_call": verdict.bytes_per_call,
        "tensors_per_call": verdict.tensors_per_call,
        "cuda_allocated_per_call": cross.get("cuda_memory_allocated_per_call"),
        "agreement": cross.get("agreement"),
        "graph_nodes_per_call": verdict.graph_nodes_per_call,
        "holder": verdict.holders[0].path if verdict.holders else "",
        "site": verdict.sites[0].site.rsplit("/", 1)[-1] if verdict.sites else "",
        "reason": verdict.reason,
        "workers": list(verdict.workers),
        "worker_memory": cross if verdict.mode == "dataloader" else None,
        "seconds": verdict.seconds,
    }
    print(json.dumps(row)[:600], flush=True)
    return row


def _per_file(name: str) -> dict[str, Any]:
    """Whole-file verification: one subprocess per target (as before) against one per file."""
    from tensorlint.engine import lint_file, read_source
    from tensorlint.verify.plan import Options, plan

    path = ROOT / name
    findings = [f for f in lint_file(path) if f.code]
    jobs = [p.job for p in plan(path, read_source(path), findings, Options()) if p.job is not None]
    started = time.perf_counter()
    for job in jobs:
        run_job(job, timeout=300)
    before = time.perf_counter() - started
    run = run_jobs(jobs, timeout=300)
    row = {"file": name, "targets": len(jobs), "per_target_s": before, "per_file_s": run.seconds, "starts": run.starts}
    print(json.dumps(row), flush=True)
    return row


def _script(name: str) -> dict[str, Any]:
    """`tensorlint verify --run examples/run/NAME --steps 50`, through the command line."""
    command = [sys.executable, "-m", "tensorlint", "verify", "--run", f"examples/run/{name}", "--output-format", "json"]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=900)
    seconds = time.perf_counter() - started
    try:
        record = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"script": name, "error": done.stderr[-2000:], "seconds": seconds}
    runtime = record["runtime"]
    row = {
        "script": name,
        "verdict": runtime["verdict"],
        "device": runtime["device"],
        "bytes_per_step": runtime["bytes_per_call"],
        "tensors_per_step": runtime["tensors_per_call"],
        "nodes_per_step": runtime["graph_nodes_per_call"],
        "holder": record["growing"][0]["holder"] if record["growing"] else "",
        "confirms": [c["code"] for g in record["growing"] for c in g["confirms"]],
        "ending": record["ending"],
        "exit": done.returncode,
        "seconds": seconds,
    }
    print(json.dumps(row), flush=True)
    return row


def _driver() -> str | None:
    try:
        found = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version,memory.total", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    return found.stdout.strip() or None


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
    arguments = [a for a in sys.argv[1:] if a != "--fixtures-only"]
    main(arguments[0] if arguments else "gpu_suite.json", fixtures_only="--fixtures-only" in sys.argv[1:])
