"""Each runtime fixture gets the verdict its docstring promises, driven as the CLI would drive it.

In-process (one torch import for all of them); tests/test_verify_cli.py covers the subprocess.
"""

from __future__ import annotations

from typing import Any

import pytest

from runtime_cases import CASES, KIB, RUNTIME, planned_job

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(("name", "job", "verdict", "per_call", "holder"), CASES, ids=[c[0] for c in CASES])
def test_fixture_verdict(name: str, job: dict[str, Any], verdict: str, per_call: int | None, holder: str) -> None:
    from tensorlint.verify.drive import run

    result = run(planned_job(name, job, calls=12))
    assert result.verdict == verdict, result.describe()
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


def test_simulated_workers_report_pid_and_line() -> None:
    import os

    from tensorlint.verify.drive import run

    result = run({"kind": "loader", "name": "load_batches", "file": str(RUNTIME / "tl003_collate_cuda.py")})
    assert result.device == "cpu (simulated CUDA)"
    assert result.workers and all(w["pid"] != os.getpid() for w in result.workers)
    assert {w["site"].rsplit("/", 1)[-1] for w in result.workers} == {"tl003_collate_cuda.py:16 collate"}


def test_a_module_needing_arguments_needs_a_spec(tmp_path: Any) -> None:
    from tensorlint.verify.drive import run

    source = "import torch\n\nclass Net(torch.nn.Module):\n    def __init__(self, width):\n        super().__init__()\n"
    (tmp_path / "net.py").write_text(source)
    result = run({"kind": "module", "name": "Net", "file": str(tmp_path / "net.py")})
    assert result.verdict == "inconclusive"
    assert result.reason.startswith("needs a spec: Net() needs constructor arguments")
