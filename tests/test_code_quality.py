"""The project holds itself to what it asks of others: its own linter, ruff and mypy."""

from __future__ import annotations

import pytest

from helpers import run_module, run_tensorlint


def test_tensorlint_finds_nothing_in_its_own_code() -> None:
    result = run_tensorlint("tensorlint", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_check_and_format() -> None:
    pytest.importorskip("ruff")
    check = run_module("ruff", "check", "tensorlint", "tests")
    assert check.returncode == 0, check.stdout
    fmt = run_module("ruff", "format", "--check", "tensorlint", "tests")
    assert fmt.returncode == 0, fmt.stdout


def test_mypy_strict() -> None:
    pytest.importorskip("mypy")
    result = run_module("mypy")
    assert result.returncode == 0, result.stdout
