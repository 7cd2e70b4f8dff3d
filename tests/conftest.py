"""Fixtures every test module may ask for; shared helpers are in helpers.py, sample texts in samples.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from samples import CACHE, FIXED, LEAKY


@pytest.fixture(autouse=True, scope="session")
def _result_cache_outside_the_tree(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The CLI caches results in the project root; tests keep it in a temporary folder (subprocesses inherit it)."""
    os.environ["TENSORLINT_CACHE_DIR"] = str(tmp_path_factory.mktemp("tensorlint_cache"))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder, as the current directory: paths in a test read as a user types them."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def sample_project(project: Path) -> Path:
    """`project` with leaky.py (one TL004), cache.py (one TL001) and clean.py (none)."""
    for name, source in (("leaky.py", LEAKY), ("cache.py", CACHE), ("clean.py", FIXED)):
        (project / name).write_text(source, encoding="utf-8")
    return project


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`@pytest.mark.gpu` is enough for a test to skip where torch sees no CUDA GPU."""
    gpu = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu:
        return
    from runtime_cases import has_cuda

    if not has_cuda():
        for item in gpu:
            item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU (marked gpu)"))
