"""docs/rules/ is generated from the rules: it must say what the code says."""

from __future__ import annotations

from helpers import ROOT
from tensorlint.docs import pages


def test_rule_pages_are_up_to_date() -> None:
    stale = [
        name
        for name, content in pages().items()
        if not (ROOT / "docs" / "rules" / name).is_file()
        or (ROOT / "docs" / "rules" / name).read_text(encoding="utf-8") != content
    ]
    assert not stale, f"regenerate with `python -m tensorlint.docs`: {stale}"
