"""The CLI over fixtures/ reports exactly the lines marked `# expect: TLnnn`, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import FIXTURES, ROOT, expected_markers, run_tensorlint
from tensorlint.rules import all_codes

FINDING = re.compile(r"^(?P<path>.+?):(?P<row>\d+):(?P<col>\d+): (?P<code>TL\d{3}) ")
RULE_FIXTURES = sorted(FIXTURES.glob("TL*/*.py"))  # fixtures/fixes/ holds fix pairs: tests/test_fixes.py
# fixtures/runtime/ is named for the verifier's cases (tests/test_verify_fixtures.py); its markers still count.
FIXTURE_FILES = RULE_FIXTURES + sorted((FIXTURES / "runtime").glob("*.py"))


def _cli_findings() -> dict[Path, set[tuple[int, str]]]:
    # The rule folders and runtime/: notebook findings read `cell N:row:col` (tests/test_notebooks.py).
    folders = sorted(str(p.relative_to(ROOT)) for p in [*FIXTURES.glob("TL*"), FIXTURES / "runtime"])
    result = run_tensorlint("--quiet", *folders)
    assert result.returncode == 1, result.stderr  # the fixtures hold leaks
    found: dict[Path, set[tuple[int, str]]] = {}
    for line in result.stdout.splitlines():
        match = FINDING.match(line)
        assert match, f"unexpected output line: {line!r}"
        found.setdefault(ROOT / match["path"], set()).add((int(match["row"]), match["code"]))
    return found


@pytest.fixture(scope="module")
def cli_findings() -> dict[Path, set[tuple[int, str]]]:
    return _cli_findings()


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_findings_match_markers(fixture: Path, cli_findings: dict[Path, set[tuple[int, str]]]) -> None:
    assert cli_findings.get(fixture, set()) == expected_markers(fixture)


@pytest.mark.parametrize("fixture", RULE_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_is_named_for_what_it_expects(fixture: Path) -> None:
    markers = expected_markers(fixture)
    if fixture.name.startswith("pos_"):
        assert markers, "a pos_ fixture must mark at least one finding"
        assert {code for _, code in markers} >= {fixture.parent.name}
    else:
        assert fixture.name.startswith("neg_"), "fixtures are pos_*.py or neg_*.py"
        assert not markers, "a neg_ fixture must expect no finding"


@pytest.mark.parametrize("code", sorted(all_codes()))
def test_every_rule_has_eight_positive_and_eight_negative_fixtures(code: str) -> None:
    folder = FIXTURES / code
    positives = [p for p in folder.glob("pos_*.py")]
    negatives = [p for p in folder.glob("neg_*.py")]
    assert len(positives) >= 8 and len(negatives) >= 8, (len(positives), len(negatives))
