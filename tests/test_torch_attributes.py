"""The names the analysis reads for torch's classes (tensorlint/analysis/torch_attributes.py) are
those of the torch that constraints.txt pins: bench/torch_attributes.py writes them from it."""

from __future__ import annotations

import importlib.util

import pytest

from helpers import ROOT

pytest.importorskip("torch")


def test_the_generated_module_is_what_the_pinned_torch_gives() -> None:
    spec = importlib.util.spec_from_file_location("torch_attributes", ROOT / "bench" / "torch_attributes.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    written = (ROOT / "tensorlint" / "analysis" / "torch_attributes.py").read_text(encoding="utf-8")
    assert written == generator.module_text(), "run `python bench/torch_attributes.py`"
