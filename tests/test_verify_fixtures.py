"""Each runtime fixture gets the verdict its docstring promises, driven as the CLI would drive it.

In-process (one torch import for all of them); tests/test_verify_cli.py covers the subprocess.
Device `auto`, as the CLI: on a GPU the same fixtures run on CUDA, and the DataLoader workers'
CUDA requests are real instead of simulated; the expectations say what each device gives.
"""

from __future__ import annotations

from typing import Any

import pytest

from runtime_cases import CASES, KIB, RUNTIME, device_label, has_cuda, planned_job

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(("name", "job", "verdict", "per_call", "holder"), CASES, ids=[c[0] for c in CASES])
def test_fixture_verdict(name: str, job: dict[str, Any], verdict: str, per_call: int | None, holder: str) -> None:
    from tensorlint.verify.drive import run

    result = run(planned_job(name, job, calls=12))
    assert result.verdict == verdict, result.describe()
    assert result.device == device_label(job["kind"]), result.describe()
    if per_call is not None:
        assert result.bytes_per_call == per_call, result.describe()
    if holder:
        assert holder in " ".join(h.path for h in result.holders), result.holders


def test_eval_total_loss_keeps_the_activations_of_every_batch() -> None:
    from tensorlint.verify.drive import run

    result = run(planned_job("tl004_eval_total_loss.py", {"kind": "loop", "name": "evaluate", "line": "total_loss +="}))
    # Per batch: the 64x512 input the graph saved for addmm and the 64x512 ReLU output.
    assert result.bytes_per_call >= 256 * KIB
    assert result.holders[0].kind == "autograd graph"


def test_workers_report_pid_and_line() -> None:
    """Without CUDA the workers' requests are simulated; with it, worker 0 fails under fork (the
    parent used CUDA). Either way the verdict names the workers and the line, in one line."""
    import os

    from tensorlint.verify.drive import run

    result = run({"kind": "loader", "name": "load_batches", "file": str(RUNTIME / "tl003_collate_cuda.py")})
    assert result.verdict == "confirmed"
    assert result.device == device_label("loader")
    assert result.workers and all(w["pid"] != os.getpid() for w in result.workers)
    assert {w["site"].rsplit("/", 1)[-1] for w in result.workers} == {"tl003_collate_cuda.py:16 collate"}
    assert "\n" not in result.reason and "Traceback" not in result.reason
    if has_cuda():
        assert "DataLoader worker process" in result.reason and "Cannot re-initialize CUDA" in result.reason
        assert "RuntimeError: RuntimeError" not in result.reason
        assert "(tl003_collate_cuda.py:16 in collate)" in result.reason
    else:
        assert "called .cuda() at tl003_collate_cuda.py:16 collate" in result.reason


def test_a_module_needing_arguments_needs_a_spec(tmp_path: Any) -> None:
    from tensorlint.verify.drive import run

    source = "import torch\n\nclass Net(torch.nn.Module):\n    def __init__(self, width):\n        super().__init__()\n"
    (tmp_path / "net.py").write_text(source)
    result = run({"kind": "module", "name": "Net", "file": str(tmp_path / "net.py")})
    assert result.verdict == "inconclusive"
    assert result.reason.startswith("needs a spec: Net() needs constructor arguments")


ACCUMULATORS = """
import torch
from torch import nn

history = {"loss": 0}


class Meter:
    def __init__(self):
        self.total = 0


def by_attribute():
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU())
    meter = Meter()
    for _ in range(40):
        loss = model(torch.randn(16, 64)).sum()
        meter.total += loss  # attribute


def by_global():
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU())
    for _ in range(40):
        loss = model(torch.randn(16, 64)).sum()
        history["loss"] = history["loss"] + loss  # global
"""


@pytest.mark.parametrize(
    ("name", "marker", "holder"),
    [
        ("by_attribute", "# attribute", "autograd graph of local `meter.total` in by_attribute()"),
        ("by_global", "# global", "autograd graph of global `history['loss']` in accumulators"),
    ],
)
def test_the_name_that_roots_an_accumulated_graph_holds_it(tmp_path: Any, name: str, marker: str, holder: str) -> None:
    """An eval loop the fixtures do not have: the holder is the attribute or global the graph hangs from."""
    from tensorlint.verify.drive import run

    path = tmp_path / "accumulators.py"
    path.write_text(ACCUMULATORS, encoding="utf-8")
    line = next(i for i, text in enumerate(ACCUMULATORS.splitlines(), 1) if marker in text)
    result = run({"kind": "loop", "name": name, "file": str(path), "line": line, "calls": 10, "warmup": 3})
    assert result.verdict == "confirmed", result.describe()
    assert result.holders[0].path.startswith(holder), result.holders
