"""Meaning-preserving rewrites of every rule fixture keep the analysis' verdict (tests/metamorphic.py).

For each transformation and each fixture it rewrites: the rewrite is still Python, its markers
travelled with their statements, and the analysis reports exactly the marked (row, code) pairs:
a positive stays reported on the statement's new line, a hard negative stays silent.

Where the analysis is not invariant today, the pair is in KNOWN_GAPS and expected to fail
(strictly: once the analysis handles it, the test fails until the entry is removed).
"""

from __future__ import annotations

from collections import Counter

import pytest
from metamorphic import applicable_pairs, findings, rewritten, rule_fixtures

from helpers import markers
from tensorlint.source import reportable

# What the analysis misses today: (transformation, fixture) -> the cause. Empty: every rewrite
# of every fixture keeps its verdict.
KNOWN_GAPS: dict[tuple[str, str], str] = {}

PAIRS = applicable_pairs()
SOURCES = {f.name: f.source for f in rule_fixtures()}


def _case(transformation: str, fixture: str) -> object:
    gap = KNOWN_GAPS.get((transformation, fixture))
    marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
    return pytest.param(transformation, fixture, marks=marks, id=f"{transformation}:{fixture}")


def test_every_rewrite_is_python_with_the_markers_it_had() -> None:
    """The transformations' own check, kept out of the (partly xfailed) verdict tests: no rewrite
    breaks the syntax, loses a marker or duplicates one."""
    broken = []
    for transformation, fixture in PAIRS:
        source = rewritten(transformation, fixture)
        assert source is not None
        try:
            compile(source, fixture, "exec", dont_inherit=True)
        except SyntaxError as error:
            broken.append(f"{transformation}:{fixture}: {error}")
            continue
        if Counter(c for _, c in markers(source)) != Counter(c for _, c in markers(SOURCES[fixture])):
            broken.append(f"{transformation}:{fixture}: markers lost or duplicated")
    assert broken == []


@pytest.mark.parametrize(("transformation", "fixture"), [_case(*pair) for pair in PAIRS])
def test_verdict_survives_rewrite(transformation: str, fixture: str) -> None:
    source = rewritten(transformation, fixture)
    assert source is not None
    found = findings(source, fixture)
    assert found == markers(source)
    hidden = sorted(code for code in {code for _, code in found} if not reportable(source, [code]))
    assert hidden == [], "the screen would skip the text when only these rules are selected"


def test_known_gaps_name_rewritten_fixtures() -> None:
    """An entry for a fixture that was renamed, or that a transformation no longer rewrites, is stale."""
    assert set(KNOWN_GAPS) - set(PAIRS) == set()
