"""The screen before parsing is as wide as the analysis: it never hides a finding.

A file the screen rules out is never parsed, so a finding in it would be lost silently. Each
fixture is checked as written and with its imports removed (real hook helpers and training
utilities often never import torch): whenever the full analysis finds something, the screen
must let the text through.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import FIXTURES, fixture_codes, leak_rule_fixtures
from tensorlint import engine
from tensorlint.source import might_matter

FIXTURE_FILES = leak_rule_fixtures()  # linted with the default codes, and an opt-in folder's own


def _without_imports(source: str) -> str:
    return "\n".join("" if line.startswith(("import ", "from ")) else line for line in source.splitlines()) + "\n"


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_screen_passes_every_text_the_analysis_reports_on(fixture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "might_matter", lambda source: True)
    monkeypatch.setattr(engine, "needs_engine", lambda source, codes, apply_noqa=True: True)
    codes = fixture_codes(fixture.relative_to(FIXTURES).as_posix())
    written = fixture.read_text(encoding="utf-8")
    if engine.lint_source(written, "<string>", codes=codes):
        assert might_matter(written), "the screen would skip a text that has findings"
    stripped = _without_imports(written)
    # A kept exception matters for the tensors its frames hold: TL007 is for files that show torch.
    if any(f.code != "TL007" for f in engine.lint_source(stripped, "<string>", codes=codes)):
        assert might_matter(stripped), "the screen would skip a text that has findings"


def test_the_screen_skips_plain_python() -> None:
    assert not might_matter("import json\n\ndef load(path):\n    with open(path) as f:\n        return json.load(f)\n")


def test_the_screen_skips_another_frameworks_code_unless_it_names_torch() -> None:
    """MXNet's training loop accumulates its own loss objects: not PyTorch code."""
    body = "\n\ndef train(net, loader, trainer):\n    total = 0\n    for x, y in loader:\n        with autograd.record():\n            loss = net(x).mean()\n        loss.backward()\n        total += loss\n    return total\n"
    assert not might_matter("from mxnet import autograd" + body)
    assert might_matter("import torch\nfrom mxnet import autograd" + body)
