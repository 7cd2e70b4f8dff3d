"""`tensorlint verify`: findings with the runtime verdict under each, JSON numbers, timeouts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, run_tensorlint, without_torch
from runtime_cases import on_device

pytest.importorskip("torch")


def _verify(*args: str) -> subprocess.CompletedProcess[str]:
    return run_tensorlint("verify", *args, timeout=120)


def test_prints_the_verdict_under_the_finding() -> None:
    result = _verify("fixtures/runtime/tl001_feature_cache.py", "--calls", "10")
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.stdout.partition("\n\nWarnings from the verified code")[0]  # torch's own, where numpy is missing
    finding, runtime, summary = report.splitlines()
    assert finding.startswith("fixtures/runtime/tl001_feature_cache.py:17:9: TL001 ")
    on = on_device(cpu="cpu", cuda="cuda:0")  # the fixture's model follows the device
    assert runtime.startswith(
        f"  runtime (FeatureRecorder (train step)): CONFIRMED on {on}: +16.0 KiB per call over 10 calls"
    )
    assert "held by FeatureRecorder.features (list, " in runtime
    assert summary == "Verified 1 finding: 1 confirmed."


def test_json_carries_the_numbers() -> None:
    result = _verify("fixtures/runtime/tl004_train_total_loss.py", "--output-format", "json", "--calls", "10")
    [record] = json.loads(result.stdout)
    assert record["code"] == "TL004"
    runtime = record["runtime"]
    assert runtime["verdict"] == "host-only"
    assert runtime["bytes_per_call"] == 0
    assert runtime["graph_nodes_per_call"] >= 1
    assert runtime["torch"].startswith("2.") and runtime["calls"] == 10 and len(runtime["deltas"]) == 10
    assert result.returncode == 1


def test_a_whole_file_drives_what_reaches_the_flagged_code() -> None:
    """No target named: the DataLoader's collate_fn is driven through the function that iterates it."""
    result = _verify("fixtures/runtime/tl003_collate_cuda.py")
    runtime = [line for line in result.stdout.splitlines() if line.startswith("  runtime")]
    assert len(runtime) == 3 and all("(load_batches() iterating its DataLoader): CONFIRMED" in r for r in runtime)
    assert result.returncode == 1


def test_what_cannot_be_driven_is_inconclusive_not_guessed(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(
        "import torch\n\n\ndef make_probe(model, x):\n    activation = model(x)\n    return lambda: activation.norm()\n"
    )
    result = _verify(str(tmp_path / "probe.py"))
    assert "INCONCLUSIVE: needs a spec: make_probe() requires model, x" in result.stdout, result.stdout
    assert result.returncode == 0


def test_a_hung_target_is_a_verdict(tmp_path: Path) -> None:
    (tmp_path / "hang.py").write_text("import time\n\n\ndef step():\n    time.sleep(60)\n")
    result = _verify(f"{tmp_path / 'hang.py'}::step", "--timeout", "5")
    assert "INCONCLUSIVE: timed out after 5 s" in result.stdout, result.stdout + result.stderr


def test_an_entry_that_returns_a_dataloader_is_iterated(tmp_path: Path) -> None:
    (tmp_path / "loader.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
        "def collate(batch):\n    return torch.stack([x for x, in batch]).cuda()\n\n\n"
        "def make_loader():\n"
        "    return DataLoader(TensorDataset(torch.randn(32, 4)), batch_size=4, num_workers=1, collate_fn=collate)\n"
    )
    result = _verify(str(tmp_path / "loader.py"), "--entry", "make_loader", "--device", "cpu")
    runtime = result.stdout.splitlines()[1]
    assert "(make_loader() iterating its DataLoader): CONFIRMED on cpu (simulated CUDA)" in runtime, result.stdout
    assert "called .cuda() at loader.py:6 collate" in runtime


def test_the_verified_codes_warnings_are_a_section_of_the_report(tmp_path: Path) -> None:
    (tmp_path / "noisy.py").write_text(
        "import warnings\n\nimport torch\n\n\ndef step():\n"
        "    warnings.warn('from the user code', UserWarning)\n    return torch.ones(4)\n"
    )
    result = _verify(f"{tmp_path / 'noisy.py'}::step", "--calls", "4")
    report, _, section = result.stdout.partition("Warnings from the verified code (not from tensorlint)")
    assert "from the user code" not in report + result.stderr
    assert "noisy.py:7: UserWarning: from the user code" in section


BLOCK_TORCH = without_torch(
    """\
import tensorlint.cli
sys.argv = ["tensorlint", "verify", "fixtures/runtime/tl001_feature_cache.py"]
sys.exit(tensorlint.cli.main())
"""
)


def test_without_torch_it_says_how_to_install_it_and_exits_2() -> None:
    result = subprocess.run([sys.executable, "-c", BLOCK_TORCH], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "pip install 'tensorlint[verify]'" in result.stderr
    assert result.stdout == ""
