"""`--add-noqa`: every current finding silenced, files never corrupted, and a second run finds nothing."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from helpers import cli
from samples import BOTH, CACHE_LINE, LEAKY_LINE, LEAKY_LINE_SPLIT
from tensorlint.add_noqa import add_noqa_to_source
from tensorlint.engine import lint_source

# Three findings: TL001 on a line with a comment already, TL004 on one line and on a statement of three.
THREE_LEAKS = BOTH.replace(CACHE_LINE, f"{CACHE_LINE}  # keep for the plot").replace(
    LEAKY_LINE, f"{LEAKY_LINE}\n{LEAKY_LINE_SPLIT}"
)


def codes(project: Path, capsys: pytest.CaptureFixture[str], *args: str) -> list[tuple[int, str]]:
    cli("--output-format", "json", *args, ".")
    return [(r["location"]["row"], r["code"]) for r in json.loads(capsys.readouterr().out)]


def test_round_trip_after_add_noqa_a_run_finds_nothing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "leaky.py").write_text(THREE_LEAKS, encoding="utf-8")
    assert len(codes(project, capsys)) == 3
    assert cli("--add-noqa", ".") == 0
    assert "Added 3 noqa directives." in capsys.readouterr().err
    assert codes(project, capsys) == []
    # and the comments it added are all in use
    assert codes(project, capsys, "--extend-select", "TL900") == []
    assert cli(".") == 0


def test_add_noqa_places_comments_where_they_belong() -> None:
    findings = lint_source(THREE_LEAKS, "leaky.py")
    new, edited = add_noqa_to_source(THREE_LEAKS, findings)
    assert edited == 3
    lines = new.splitlines()
    assert "        self.cache.append(h)  # keep for the plot  # noqa: TL001" in lines
    assert f"{LEAKY_LINE}  # noqa: TL004" in lines
    assert "        )  # noqa: TL004" in lines  # the end of the multi-line statement
    assert new.replace("  # noqa: TL004", "").replace("  # noqa: TL001", "") == THREE_LEAKS


def test_add_noqa_merges_with_an_existing_noqa_comment() -> None:
    source = THREE_LEAKS.replace(LEAKY_LINE, LEAKY_LINE + "  # noqa: E501")
    new, _ = add_noqa_to_source(source, lint_source(source, "leaky.py"))
    assert f"{LEAKY_LINE}  # noqa: E501, TL004" in new.splitlines()


def test_add_noqa_keeps_crlf_bom_and_permissions(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project / "leaky.py"
    path.write_bytes(b"\xef\xbb\xbf" + THREE_LEAKS.replace("\n", "\r\n").encode("utf-8"))
    os.chmod(path, 0o640)
    assert cli("--add-noqa", "leaky.py") == 0
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\r\n") == THREE_LEAKS.count("\n") and b"\n" not in data.replace(b"\r\n", b"")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert codes(project, capsys) == []
    assert [p.name for p in project.iterdir()] == ["leaky.py"]  # no temporary file left behind


def test_add_noqa_never_edits_a_string_that_looks_like_a_directive(project: Path) -> None:
    source = THREE_LEAKS.replace(
        "        self.cache.append(h)  # keep for the plot", '        self.cache.append(h); s = "# noqa: E1"'
    )
    new, edited = add_noqa_to_source(source, lint_source(source, "leaky.py"))
    assert '"# noqa: E1"' in new
    assert edited == 2  # the TL001 line is left alone rather than changing the string


def test_add_noqa_refuses_stdin(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("--add-noqa", "-") == 2
    assert "stdin" in capsys.readouterr().err


def test_add_noqa_on_a_clean_tree_changes_nothing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "clean.py").write_text("import torch\n", encoding="utf-8")
    assert cli("--add-noqa", ".") == 0
    assert "Added 0 noqa directives." in capsys.readouterr().err
    assert (project / "clean.py").read_text(encoding="utf-8") == "import torch\n"
