"""`# noqa` comments, with flake8's syntax: per line, per code, per statement, per file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import cli
from samples import BOTH, CACHE_LINE, LEAKY, LEAKY_LINE, LEAKY_LINE_SPLIT


@pytest.fixture
def codes(project: Path, capsys: pytest.CaptureFixture[str]):
    """Lint a source text through the CLI and return the codes it reports."""

    def run(source: str) -> list[str]:
        (project / "snippet.py").write_text(source, encoding="utf-8")
        cli("--output-format", "json", "snippet.py")
        return [record["code"] for record in json.loads(capsys.readouterr().out)]

    return run


def with_comment(source: str, line: str, comment: str) -> str:
    assert source.count(line + "\n") == 1
    return source.replace(line + "\n", f"{line}  {comment}\n")


def test_snippets_are_reported_without_noqa(codes) -> None:
    assert codes(LEAKY) == ["TL004"]
    assert codes(BOTH) == ["TL001", "TL004"]


def test_blanket_noqa_suppresses_the_line(codes) -> None:
    assert codes(with_comment(LEAKY, LEAKY_LINE, "# noqa")) == []


def test_noqa_with_the_code_suppresses_it(codes) -> None:
    assert codes(with_comment(LEAKY, LEAKY_LINE, "# noqa: TL004")) == []


def test_noqa_with_a_list_of_codes_without_spaces_suppresses_each(codes) -> None:
    source = with_comment(BOTH, LEAKY_LINE, "# noqa:TL001,TL004")
    source = with_comment(source, CACHE_LINE, "# noqa:TL001,TL004")
    assert codes(source) == []


def test_noqa_is_case_insensitive(codes) -> None:
    assert codes(with_comment(LEAKY, LEAKY_LINE, "# NOQA: tl004")) == []


def test_noqa_with_another_code_does_not_suppress(codes) -> None:
    assert codes(with_comment(LEAKY, LEAKY_LINE, "# noqa: TL001")) == ["TL004"]


def test_noqa_with_other_lowercase_code_does_not_suppress(codes) -> None:
    assert codes(with_comment(LEAKY, LEAKY_LINE, "# NOQA: tl001")) == ["TL004"]


def test_noqa_applies_only_to_its_own_line(codes) -> None:
    assert codes(with_comment(BOTH, CACHE_LINE, "# noqa")) == ["TL004"]


def test_noqa_on_the_line_above_does_not_suppress(codes) -> None:
    source = LEAKY.replace("    for x, y in loader:\n", "    for x, y in loader:  # noqa\n")
    assert codes(source) == ["TL004"]


def test_noqa_at_the_end_of_a_multiline_statement_suppresses_a_finding_on_its_first_line(codes) -> None:
    # As flake8 does: the comment covers every physical line of the logical line.
    source = LEAKY.replace(LEAKY_LINE, f"{LEAKY_LINE_SPLIT}  # noqa: TL004")
    without = source.replace("  # noqa: TL004", "")
    assert codes(without) == ["TL004"]  # the finding is there to suppress
    assert codes(source) == []


def test_noqa_after_a_multiline_statement_does_not_reach_into_it(codes) -> None:
    source = LEAKY.replace(LEAKY_LINE, f"{LEAKY_LINE_SPLIT}\n    # noqa")
    assert codes(source) == ["TL004"]


@pytest.mark.parametrize("comment", ["# tensorlint: noqa", "# flake8: noqa", "# FLAKE8: NOQA", "# tensorlint:noqa"])
def test_file_level_noqa_suppresses_every_finding(codes, comment: str) -> None:
    assert codes(f"{comment}\n{BOTH}") == []


def test_file_level_noqa_works_below_the_first_line(codes) -> None:
    assert codes(BOTH.replace("model = nn.Linear", "# tensorlint: noqa\nmodel = nn.Linear")) == []


def test_file_level_noqa_with_a_code_suppresses_only_that_code(codes) -> None:
    assert codes(f"# tensorlint: noqa: TL001\n{BOTH}") == ["TL004"]


def test_file_level_noqa_with_codes_suppresses_each(codes) -> None:
    assert codes(f"# tensorlint: noqa: TL001,TL004\n{BOTH}") == []


def test_file_level_noqa_must_be_a_comment_of_its_own(codes) -> None:
    # A trailing comment that mentions the file-level form is an ordinary line noqa.
    source = BOTH.replace("model = nn.Linear(4, 2)\n", "model = nn.Linear(4, 2)  # tensorlint: noqa\n")
    assert codes(source) == ["TL001", "TL004"]
