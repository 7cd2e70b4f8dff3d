"""The command line, as ruff users expect it: output formats, exit codes, selection, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import ROOT, cli, reported, run_tensorlint
from samples import CACHE_ROW, LEAKY, LEAKY_COLUMN, LEAKY_LINE, LEAKY_ROW
from tensorlint import __version__
from tensorlint.rules import all_codes, all_rules, default_codes


def test_concise_output_is_path_row_column_code_message(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli("leaky.py")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"leaky.py:{LEAKY_ROW}:{LEAKY_COLUMN}: TL004 ")
    assert len(lines[0]) > len(f"leaky.py:{LEAKY_ROW}:{LEAKY_COLUMN}: TL004 ")  # a message follows the code


def test_summary_counts_findings(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli("leaky.py")
    assert "Found 1 error." in capsys.readouterr().out.splitlines()
    cli("leaky.py", "cache.py")
    assert "Found 2 errors." in capsys.readouterr().out.splitlines()


def test_findings_are_sorted_by_file_then_row(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli("leaky.py", "cache.py")
    assert reported(capsys.readouterr().out) == [("cache.py", CACHE_ROW, "TL001"), ("leaky.py", LEAKY_ROW, "TL004")]


def test_clean_run_prints_all_checks_passed_and_exits_0(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli("clean.py") == 0
    assert capsys.readouterr().out == "All checks passed!\n"


def test_findings_exit_1(sample_project: Path) -> None:
    assert cli("leaky.py") == 1


def test_exit_zero_exits_0_and_still_prints_findings(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("--exit-zero", "leaky.py") == 0
    out = capsys.readouterr().out
    assert reported(out) == [("leaky.py", LEAKY_ROW, "TL004")]
    assert "Found 1 error." in out


def test_no_path_checks_the_current_folder(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli() == 1
    assert reported(capsys.readouterr().out) == [("cache.py", CACHE_ROW, "TL001"), ("leaky.py", LEAKY_ROW, "TL004")]


def test_missing_path_is_named_on_stderr_exits_2_and_other_paths_are_checked(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli("missing.py", "leaky.py") == 2
    captured = capsys.readouterr()
    assert "missing.py" in captured.err
    assert "No such file or directory" in captured.err
    assert reported(captured.out) == [("leaky.py", LEAKY_ROW, "TL004")]


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        pytest.param(["--no-such-option"], "--no-such-option", id="unknown-option"),
        pytest.param(["--output-format", "xml"], "xml", id="bad-output-format"),
        pytest.param(["--select", "TL999"], "TL999", id="unknown-code-in-select"),
        pytest.param(["--ignore", "XY1"], "XY1", id="unknown-code-in-ignore"),
    ],
)
def test_usage_error_exits_2_naming_the_culprit(
    sample_project: Path, capsys: pytest.CaptureFixture[str], args: list[str], culprit: str
) -> None:
    assert cli(*args, "leaky.py") == 2
    captured = capsys.readouterr()
    assert culprit in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_select_one_code_reports_only_that_code(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli("--select", "TL001", "leaky.py", "cache.py")
    assert reported(capsys.readouterr().out) == [("cache.py", CACHE_ROW, "TL001")]


def test_select_is_case_insensitive_and_comma_separated(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli("--select", "tl001,tl004", "leaky.py", "cache.py")
    assert [code for _, _, code in reported(capsys.readouterr().out)] == ["TL001", "TL004"]


def test_ignore_one_code_drops_only_that_code(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli("--ignore", "TL004", "leaky.py", "cache.py")
    assert reported(capsys.readouterr().out) == [("cache.py", CACHE_ROW, "TL001")]


def test_select_a_prefix_enables_every_code_under_it(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli("--select", "TL00", "leaky.py", "cache.py")
    assert [code for _, _, code in reported(capsys.readouterr().out)] == ["TL001", "TL004"]


def test_ignore_a_prefix_disables_every_code_under_it(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("--ignore", "TL00", "leaky.py", "cache.py") == 0
    assert capsys.readouterr().out == "All checks passed!\n"


def test_select_all_enables_every_code(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli("--select", "ALL", "leaky.py", "cache.py")
    assert [code for _, _, code in reported(capsys.readouterr().out)] == ["TL001", "TL004"]


def test_full_output_shows_the_source_line_and_carets_under_the_span(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli("--output-format", "json", "leaky.py")
    [record] = json.loads(capsys.readouterr().out)
    start, end = record["location"], record["end_location"]
    assert start["row"] == end["row"] == LEAKY_ROW

    cli("--output-format", "full", "leaky.py")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"leaky.py:{LEAKY_ROW}:{LEAKY_COLUMN}: TL004 ")
    source_index = next(i for i, line in enumerate(lines) if line.endswith(LEAKY_LINE))
    source_line, caret_line = lines[source_index], lines[source_index + 1]
    assert source_line == f"{LEAKY_ROW} | {LEAKY_LINE}"
    gutter = len(f"{LEAKY_ROW} | ")
    assert caret_line[:gutter].strip() == "|"
    carets = caret_line[gutter:]
    assert carets == " " * (start["column"] - 1) + "^" * (end["column"] - start["column"])
    assert LEAKY_LINE[start["column"] - 1 : end["column"] - 1].startswith("total +=")


def test_full_output_links_the_rule_documentation(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli("--output-format", "full", "leaky.py")
    assert "TL004" in next(line for line in capsys.readouterr().out.splitlines() if "help" in line)


def test_json_output_uses_ruff_field_names(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("--output-format", "json", "leaky.py") == 1
    [record] = json.loads(capsys.readouterr().out)
    assert {"code", "message", "filename", "location", "end_location", "fix", "url"} <= set(record)
    assert record["code"] == "TL004"
    assert record["message"]
    assert record["filename"] == str(sample_project / "leaky.py")
    assert Path(record["filename"]).is_absolute()
    assert record["location"] == {"row": LEAKY_ROW, "column": LEAKY_COLUMN}
    assert set(record["end_location"]) == {"row", "column"}
    assert record["fix"]["applicability"] == "unsafe"
    assert set(record["fix"]) == {"applicability", "message", "edits"}
    assert set(record["fix"]["edits"][0]) == {"content", "location", "end_location"}
    assert "TL004" in record["url"]


def test_json_columns_are_1_based(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli("--output-format", "json", "leaky.py")
    [record] = json.loads(capsys.readouterr().out)
    assert record["location"]["column"] == LEAKY_LINE.index("total") + 1


def test_json_output_of_a_clean_run_is_an_empty_list(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("--output-format", "json", "clean.py") == 0
    assert json.loads(capsys.readouterr().out) == []


def test_syntax_error_is_reported_exits_1_and_other_files_are_still_checked(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (sample_project / "broken.py").write_text("import torch\nx = = 1\ny = 2\n", encoding="utf-8")
    assert cli("broken.py", "leaky.py") == 1
    captured = capsys.readouterr()
    broken = [line for line in captured.out.splitlines() if line.startswith("broken.py:")]
    assert len(broken) == 1
    assert ": SyntaxError: " in broken[0]
    assert reported(captured.out)[-1] == ("leaky.py", LEAKY_ROW, "TL004")
    assert "Traceback" not in captured.err


def test_syntax_error_is_reported_at_the_line_of_the_error(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As Python and ruff report it: `x = = 1` is the second line.
    (sample_project / "broken.py").write_text("import torch\nx = = 1\ny = 2\n", encoding="utf-8")
    cli("broken.py")
    out = capsys.readouterr().out
    assert out.startswith("broken.py:2:"), out


def test_syntax_error_in_json_has_no_code(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (sample_project / "broken.py").write_text("import torch\ndef f(:\n    pass\n", encoding="utf-8")
    cli("--output-format", "json", "broken.py")
    [record] = json.loads(capsys.readouterr().out)
    assert record["code"] is None
    assert record["message"].startswith("SyntaxError: ")


def test_file_without_the_word_torch_is_never_reported(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # With `import torch` this file would be reported (as a syntax error); without it, it is skipped.
    (sample_project / "other.py").write_text("import numpy\nx = = 1\n", encoding="utf-8")
    assert cli("other.py") == 0
    assert capsys.readouterr().out == "All checks passed!\n"


def test_latin1_file_with_a_coding_cookie_is_linted(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + LEAKY
    (sample_project / "latin.py").write_bytes(source.encode("latin-1"))
    assert cli("latin.py") == 1
    assert reported(capsys.readouterr().out) == [("latin.py", LEAKY_ROW + 2, "TL004")]


def test_undecodable_file_is_reported_not_a_traceback(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (sample_project / "garbled.py").write_bytes(b"import torch\n# caf\xe9\n")  # latin-1 bytes, no cookie
    assert cli("garbled.py", "leaky.py") == 1
    captured = capsys.readouterr()
    assert [line for line in captured.out.splitlines() if line.startswith("garbled.py:")]
    assert reported(captured.out)[-1] == ("leaky.py", LEAKY_ROW, "TL004")
    assert "Traceback" not in captured.err


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda text: b"\xef\xbb\xbf" + text.encode("utf-8"), id="bom"),
        pytest.param(lambda text: text.replace("\n", "\r\n").encode("utf-8"), id="crlf"),
    ],
)
def test_bom_and_crlf_files_give_the_same_findings_as_the_plain_file(
    sample_project: Path, capsys: pytest.CaptureFixture[str], encode
) -> None:
    (sample_project / "variant.py").write_bytes(encode(LEAKY))
    cli("--output-format", "json", "leaky.py")
    plain = json.loads(capsys.readouterr().out)
    cli("--output-format", "json", "variant.py")
    variant = json.loads(capsys.readouterr().out)
    assert [(r["code"], r["location"], r["end_location"]) for r in variant] == [
        (r["code"], r["location"], r["end_location"]) for r in plain
    ]
    assert plain  # the comparison is about a real finding


def test_check_subcommand_equals_the_bare_command(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare = cli("leaky.py", "cache.py")
    bare_out = capsys.readouterr().out
    check = cli("check", "leaky.py", "cache.py")
    assert (check, capsys.readouterr().out) == (bare, bare_out)


def test_rule_prints_the_rule_documentation(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("rule", "TL001") == 0
    out = capsys.readouterr().out
    assert out.startswith("# ")
    assert "TL001" in out.splitlines()[0]
    assert "## What it does" in out


def test_rule_with_an_unknown_code_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("rule", "TL999") == 2
    captured = capsys.readouterr()
    assert "TL999" in captured.err
    assert captured.out == ""


def test_rules_lists_every_rule_and_whether_it_is_on_by_default(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli("rules") == 0
    header, *rows = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert header.split()[:4] == ["code", "name", "default", "fix"]
    # The codes as the registry reads them from module names, without importing a rule.
    codes = sorted(all_codes())
    assert [line.split()[0] for line in rows] == codes
    states = [line.split()[2] for line in rows]
    assert states == ["enabled" if code in default_codes() else "opt-in" for code in codes]
    assert set(states) == {"enabled", "opt-in"}


def test_quiet_suppresses_the_summary(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("-q", "leaky.py") == 1
    out = capsys.readouterr().out
    assert reported(out) == [("leaky.py", LEAKY_ROW, "TL004")]
    assert "Found" not in out
    assert cli("-q", "clean.py") == 0
    assert capsys.readouterr().out == ""


def test_stdin_is_linted_under_the_stdin_filename(tmp_path: Path) -> None:
    result = run_tensorlint("-", "--stdin-filename", "pkg/train.py", cwd=tmp_path, stdin=LEAKY)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith(f"pkg/train.py:{LEAKY_ROW}:{LEAKY_COLUMN}: TL004 ")
    assert "Found 1 error." in result.stdout.splitlines()
    assert result.stderr == ""


def test_stdin_without_a_filename_is_reported_as_dash(tmp_path: Path) -> None:
    result = run_tensorlint("-", cwd=tmp_path, stdin=LEAKY)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith(f"-:{LEAKY_ROW}:{LEAKY_COLUMN}: TL004 ")


def test_version_prints_the_package_version(tmp_path: Path) -> None:
    result = run_tensorlint("--version", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.strip() == f"tensorlint {__version__}"


def test_rules_table_shows_name_default_state_and_fix_availability(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli("rules")
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[1:]}
    for rule in all_rules():
        state = "enabled" if rule.default_enabled else "opt-in"
        assert rows[rule.code][1:4] == [rule.name, state, rule.fix_availability], rule.code


def test_rules_as_json_come_from_the_same_source_as_the_docs(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("rules", "--output-format", "json") == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["code"] for r in records] == [rule.code for rule in all_rules()]
    for record in records:
        assert {"name", "summary", "default", "fix_availability", "url", "explanation"} <= set(record)
        page = (ROOT / "docs" / "rules" / f"{record['code']}.md").read_text(encoding="utf-8")
        assert record["explanation"] == page
    cli("rule", "TL004")
    assert capsys.readouterr().out == (ROOT / "docs" / "rules" / "TL004.md").read_text(encoding="utf-8")


def test_rule_as_json_and_rule_all(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("rule", "tl900", "--output-format", "json") == 0
    assert json.loads(capsys.readouterr().out)["name"] == "unused-noqa"
    assert cli("rule", "--all", "--output-format", "json") == 0
    assert len(json.loads(capsys.readouterr().out)) == len(all_rules())
    assert cli("rule") == 2
