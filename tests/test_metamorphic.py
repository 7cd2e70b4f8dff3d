"""Meaning-preserving rewrites of every rule fixture keep the analysis' verdict (tests/metamorphic.py).

For each fixture and each transformation that rewrites it: the rewrite is still Python, its
markers travelled with their statements, and the analysis reports exactly the marked (row, code)
pairs: a positive stays reported on the statement's new line, a hard negative stays silent.

One test per fixture runs every transformation on it, so the rewriting is shared out among the
workers instead of being done by each at collection. Where the analysis is not invariant today,
the pair is in KNOWN_GAPS and must fail (strictly: once the analysis handles it, the test fails
until the entry is removed).
"""

from __future__ import annotations

from collections import Counter

import pytest
from metamorphic import TRANSFORMATIONS, Fixture, findings, rule_fixtures

from helpers import markers
from tensorlint.source import reportable

# What the analysis misses today: (transformation, fixture) -> the cause. Empty: every rewrite
# of every fixture keeps its verdict.
KNOWN_GAPS: dict[tuple[str, str], str] = {}

# Sources only: a test makes its own Fixture, so the trees it caches go when the test ends.
SOURCES = {fixture.name: fixture.source for fixture in rule_fixtures()}


def _problem(source: str, original: str, fixture: str) -> str | None:
    """Why a rewrite fails, or None when it is Python with the fixture's markers and keeps the verdict."""
    try:
        compile(source, fixture, "exec", dont_inherit=True)
    except SyntaxError as error:
        return f"the rewrite is not Python: {error}"
    if Counter(c for _, c in markers(source)) != Counter(c for _, c in markers(original)):
        return "the rewrite lost or duplicated a marker"
    found, expected = findings(source, fixture), markers(source)
    if found != expected:
        return f"reported {sorted(found - expected)}, missed {sorted(expected - found)}"
    hidden = sorted(code for code in {code for _, code in found} if not reportable(source, [code]))
    return f"the screen would skip the text when only {hidden} are selected" if hidden else None


@pytest.mark.parametrize("name", SOURCES)
def test_verdict_survives_every_rewrite(name: str) -> None:
    fixture = Fixture(name, SOURCES[name])
    failures, stale = [], []
    for transformation in TRANSFORMATIONS:
        gap = KNOWN_GAPS.get((transformation.name, fixture.name))
        source = transformation.apply(fixture)
        problem = None if source is None else _problem(source, fixture.source, fixture.name)
        if gap is not None and (source is None or problem is None):
            stale.append(f"{transformation.name}: listed in KNOWN_GAPS ({gap}) but it rewrites nothing or holds")
        elif gap is None and problem is not None:
            failures.append(f"{transformation.name}: {problem}")
    assert failures + stale == []


def test_known_gaps_name_transformations_and_fixtures() -> None:
    """An entry for a fixture that was renamed, or a transformation that was removed, is stale."""
    names = {t.name for t in TRANSFORMATIONS}
    assert [key for key in KNOWN_GAPS if key[0] not in names or key[1] not in SOURCES] == []
