"""The screens before LibCST parses a file never hide a finding.

The screen (`source.reportable`) asks whether the text is torch code, and whether it has the words
of an enabled rule. A file it rules out is never parsed, so a finding in it would be lost silently.
Each fixture is checked rule by rule with the screen off: every rule that reports in it must be let
through on its own (tests/test_metamorphic.py checks the same on every rewrite).
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from helpers import FIXTURES, ROOT, fixture_codes, leak_rule_fixtures
from tensorlint import engine
from tensorlint.analysis.flow import analyze
from tensorlint.analysis.parse import parse_module
from tensorlint.analysis.project import Project
from tensorlint.rules import all_rules
from tensorlint.source import might_matter, reportable

FIXTURE_FILES = leak_rule_fixtures()  # linted with the default codes, and an opt-in folder's own
ALL_PYTHON_FILES = sorted([*FIXTURES.rglob("*.py"), *(ROOT / "examples").rglob("*.py")])


def _without_imports(source: str) -> str:
    return "\n".join("" if line.startswith(("import ", "from ")) else line for line in source.splitlines()) + "\n"


def _unscreened_codes(source: str, codes: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> set[str]:
    monkeypatch.setattr(engine, "reportable", lambda source, codes: list(codes))
    found = {f.code for f in engine.lint_source(source, "<string>", codes=codes) if f.code}
    monkeypatch.undo()
    return found


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_screen_passes_every_rule_that_reports_in_a_text(fixture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    codes = fixture_codes(fixture.relative_to(FIXTURES).as_posix())
    written = fixture.read_text(encoding="utf-8")
    for code in _unscreened_codes(written, codes, monkeypatch):
        assert reportable(written, [code]), f"the screen would skip a text where {code} reports"
    stripped = _without_imports(written)
    # A kept exception matters for the tensors its frames hold: TL007 is for files that show torch.
    for code in _unscreened_codes(stripped, codes, monkeypatch) - {"TL007"}:
        assert reportable(stripped, [code]), f"the screen would skip a text where {code} reports"


def test_the_screen_skips_plain_python() -> None:
    assert not might_matter("import json\n\ndef load(path):\n    with open(path) as f:\n        return json.load(f)\n")


def test_the_screen_skips_another_frameworks_code_unless_it_names_torch() -> None:
    """MXNet's training loop accumulates its own loss objects: not PyTorch code."""
    body = "\n\ndef train(net, loader, trainer):\n    total = 0\n    for x, y in loader:\n        with autograd.record():\n            loss = net(x).mean()\n        loss.backward()\n        total += loss\n    return total\n"
    assert not might_matter("from mxnet import autograd" + body)
    assert might_matter("import torch\nfrom mxnet import autograd" + body)
    # Caffe2's script beside the PyTorch one names `pytorch` only in a module's name and a link.
    caffe2 = "from caffe2.python import workspace\nimport dlrm_data_pytorch as dp  # github.com/pytorch/pytorch\n"
    assert not might_matter(caffe2 + body)
    assert might_matter(caffe2 + "import torchvision\n" + body)


TEST_MODULE = """\
import pytest
import torch


def test_training_keeps_every_loss():
    model = torch.nn.Linear(2, 1)
    losses = []
    for _ in range(3):
        losses.append(model(torch.ones(2)).sum())
    assert len(losses) == 3
"""


def test_test_code_is_not_parsed_when_no_rule_that_runs_there_could_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """Growth rules do not run in test code; the rules that do are about APIs this test never names."""

    def parse(source: str) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(engine, "parse_module", parse)
    monkeypatch.setattr(engine, "build_module", parse)
    assert engine.lint_source(TEST_MODULE, "tests/test_training.py") == []
    with pytest.raises(AssertionError, match="parsed"):
        engine.lint_source(TEST_MODULE, "training.py")


INDEX_ONLY = [rule for rule in all_rules() if not rule.reads_flow]


def _reports(module: cst.Module, path: Path, *, walk_units: bool) -> dict[str, list[tuple[int, str]]]:
    """What each index-only rule reports, from one analysis."""
    facts = analyze(module, path=path, project=Project(), walk_units=walk_units)
    return {rule.code: [(id(report.node), report.message) for report in rule().check(facts)] for rule in INDEX_ONLY}


@pytest.mark.parametrize("path", ALL_PYTHON_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_rule_that_reads_only_the_index_reports_the_same_without_the_walk(path: Path) -> None:
    # A file where only such rules run (test code: TL005, TL017) is indexed without the flow
    # walk and without the modules it imports: those rules must not miss what the walk adds.
    module = parse_module(path.read_text(encoding="utf-8"))
    assert _reports(module, path, walk_units=False) == _reports(module, path, walk_units=True)
