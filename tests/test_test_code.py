"""Test code runs a few steps: rules about growth over a long run stay silent there, others do not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensorlint.engine import lint_source
from tensorlint.source import is_test_code

EVAL_LOOP = """\
import torch


def evaluate(model, loader):
    total = 0
    for x, y in loader:
        total += torch.nn.functional.mse_loss(model(x), y)
    return total
"""

CUDA_COLLATE = """\
import torch
from torch.utils.data import DataLoader


def collate(batch):
    return torch.stack(batch).cuda()


loader = DataLoader(range(10), collate_fn=collate, num_workers=4)
"""

PYTEST_HEADER = "import pytest\n"


@pytest.mark.parametrize(
    ("filename", "source"),
    [
        ("tests/helpers.py", EVAL_LOOP),  # any file of a tests/ folder
        ("project/tests/models/test_loop.py", EVAL_LOOP),
        ("test_loop.py", PYTEST_HEADER + EVAL_LOOP),
        ("loop_test.py", "import unittest\n" + EVAL_LOOP),
        ("conftest.py", EVAL_LOOP + "\n\ndef test_evaluate():\n    pass\n"),
    ],
)
def test_growth_is_not_reported_in_test_code(filename: str, source: str) -> None:
    assert is_test_code(filename, source)
    assert [f.code for f in lint_source(source, filename)] == []
    assert [f.code for f in lint_source(source, "train.py")] == ["TL004"]


@pytest.mark.parametrize(
    "filename",
    [
        "pmnist_test.py",  # research code names its evaluation scripts so: no pytest, no test_ function
        "test_model.py",
        "test.py",
        "contest/train.py",
        "test/train.py",
    ],
)
def test_scripts_named_like_tests_are_checked(filename: str) -> None:
    assert not is_test_code(filename, EVAL_LOOP)
    assert [f.code for f in lint_source(EVAL_LOOP, filename)] == ["TL004"]


def test_crashes_are_reported_in_test_code() -> None:
    assert [f.code for f in lint_source(CUDA_COLLATE, "tests/test_data.py")] == ["TL003"]


def test_absolute_paths_count_the_folders_below_the_project_root(tmp_path: Path) -> None:
    project = tmp_path / "tests" / "project"  # a checkout that happens to lie in someone's tests/ folder
    (project / "tests").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    assert not is_test_code(str(project / "train.py"), EVAL_LOOP)
    assert is_test_code(str(project / "tests" / "helpers.py"), EVAL_LOOP)
    assert [f.code for f in lint_source(EVAL_LOOP, str(project / "train.py"))] == ["TL004"]
