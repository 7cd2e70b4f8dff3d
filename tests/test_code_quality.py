"""The project holds itself to what it asks of others: its own linter, ruff and mypy."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_tensorlint_finds_nothing_in_its_own_code() -> None:
    result = _run("tensorlint", "tensorlint", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_check_and_format() -> None:
    pytest.importorskip("ruff")
    check = _run("ruff", "check", "tensorlint", "tests")
    assert check.returncode == 0, check.stdout
    fmt = _run("ruff", "format", "--check", "tensorlint", "tests")
    assert fmt.returncode == 0, fmt.stdout


def test_mypy_strict() -> None:
    pytest.importorskip("mypy")
    result = _run("mypy")
    assert result.returncode == 0, result.stdout
