"""The static path never imports torch: it runs where torch is not installed."""

from __future__ import annotations

import subprocess
import sys

from helpers import ROOT, without_torch

BLOCK_TORCH = without_torch(
    """\
import tensorlint.cli
import tensorlint.flake8_plugin
sys.argv = ["tensorlint", "--quiet", "fixtures", "examples"]
code = tensorlint.cli.main()
assert not any(m == "torch" or m.startswith("torch.") for m in sys.modules), "torch was imported"
print("exit", code)
"""
)


def test_linting_works_with_torch_import_blocked() -> None:
    result = subprocess.run([sys.executable, "-c", BLOCK_TORCH], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "exit 1" in result.stdout  # findings, not an import failure
    assert "TL001" in result.stdout and "TL004" in result.stdout
