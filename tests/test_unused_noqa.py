"""TL900 (unused-noqa): what it reports, and the fix it offers."""

from __future__ import annotations

from tensorlint.engine import lint_source
from tensorlint.findings import Applicability, Finding


def unused(source: str) -> list[Finding]:
    return [f for f in lint_source(source, "snippet.py") if f.code == "TL900"]


def apply(source: str, finding: Finding) -> str:
    assert finding.fix is not None
    [edit] = finding.fix.edits
    lines = source.splitlines(keepends=True)
    line = lines[edit.location.row - 1]
    lines[edit.location.row - 1] = (
        line[: edit.location.column - 1] + edit.content + line[edit.end_location.column - 1 :]
    )
    return "".join(lines)


def test_unused_directive_is_reported_at_the_comment() -> None:
    source = "import torch\nx = torch.zeros(1)  # noqa: TL004\n"
    [finding] = unused(source)
    assert (finding.location.row, finding.location.column) == (2, 21)
    assert "`TL004`" in finding.message


def test_fix_removes_the_whole_comment_when_nothing_is_left() -> None:
    source = "import torch\nx = torch.zeros(1)  # noqa: TL004\n"
    [finding] = unused(source)
    assert finding.fix is not None and finding.fix.applicability is Applicability.SAFE
    assert apply(source, finding) == "import torch\nx = torch.zeros(1)\n"


def test_fix_keeps_the_codes_of_other_tools() -> None:
    source = "import torch\nx = torch.zeros(1)  # noqa: E501, TL004\n"
    [finding] = unused(source)
    assert apply(source, finding) == "import torch\nx = torch.zeros(1)  # noqa: E501\n"


def test_no_fix_when_the_comment_goes_on_after_the_directive() -> None:
    [finding] = unused("import torch\nx = torch.zeros(1)  # noqa: TL004 kept from the old loop\n")
    assert finding.fix is None


def test_noqa_in_a_file_without_torch_is_still_checked() -> None:
    assert [f.code for f in unused("x = 1  # noqa: TL001\n")] == ["TL900"]


def test_a_file_that_does_not_parse_is_not_checked_for_unused_noqa() -> None:
    assert unused("import torch\nx = = 1  # noqa: TL001\n") == []


def test_tl900_can_silence_itself() -> None:
    assert unused("import torch\nx = torch.zeros(1)  # noqa: TL004, TL900\n") == []
