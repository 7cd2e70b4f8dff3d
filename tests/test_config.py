"""`[tool.tensorlint]` in pyproject.toml: selection, excludes, per-file-ignores, and errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from helpers import cli, reported, write
from samples import CACHE, LEAKY

SAMPLE_FINDINGS = [("cache.py", "TL001"), ("leaky.py", "TL004")]  # what sample_project reports by itself


def pyproject(root: Path, body: str) -> Path:
    return write(root, "pyproject.toml", "[tool.tensorlint]\n" + textwrap.dedent(body))


def files_and_codes(out: str) -> list[tuple[str, str]]:
    """(file, code) of each finding: configuration decides which files and codes, never rows."""
    return [(file, code) for file, _, code in reported(out)]


def test_config_select_limits_the_codes(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project, 'select = ["TL001"]\n')
    assert cli(".") == 1
    assert files_and_codes(capsys.readouterr().out) == [("cache.py", "TL001")]


def test_config_ignore_drops_codes(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project, 'ignore = ["TL001"]\n')
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == [("leaky.py", "TL004")]


def test_config_selectors_accept_prefixes(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project, 'select = ["TL00"]\nignore = ["TL0"]\n')
    assert cli(".") == 0
    assert files_and_codes(capsys.readouterr().out) == []


def test_config_in_a_parent_folder_is_found(
    sample_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(sample_project, 'select = ["TL001"]\n')
    write(sample_project, "pkg/inner/leaky.py", LEAKY)
    write(sample_project, "pkg/inner/cache.py", CACHE)
    monkeypatch.chdir(sample_project / "pkg" / "inner")
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == [("cache.py", "TL001")]


def test_pyproject_without_a_tensorlint_table_is_skipped_when_searching_upward(
    sample_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(sample_project, 'select = ["TL001"]\n')
    write(sample_project, "sub/pyproject.toml", '[project]\nname = "sub"\n\n[tool.black]\nline-length = 100\n')
    write(sample_project, "sub/leaky.py", LEAKY)
    write(sample_project, "sub/cache.py", CACHE)
    monkeypatch.chdir(sample_project / "sub")
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == [("cache.py", "TL001")]


def test_nearest_tensorlint_table_wins(
    sample_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(sample_project, 'select = ["TL001"]\n')
    pyproject(sample_project / "sub", 'select = ["TL004"]\n')
    write(sample_project, "sub/leaky.py", LEAKY)
    write(sample_project, "sub/cache.py", CACHE)
    monkeypatch.chdir(sample_project / "sub")
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == [("leaky.py", "TL004")]


def test_exclude_pattern_without_slash_matches_any_path_component(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(sample_project, 'exclude = ["generated"]\n')
    write(sample_project, "generated/a.py", LEAKY)
    write(sample_project, "pkg/generated/b.py", LEAKY)
    write(sample_project, "pkg/generated_not/c.py", LEAKY)
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == [
        ("cache.py", "TL001"),
        ("leaky.py", "TL004"),
        ("pkg/generated_not/c.py", "TL004"),
    ]


def test_exclude_pattern_without_slash_matches_file_names_by_glob(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(sample_project, 'exclude = ["*_pb2.py"]\n')
    write(sample_project, "pkg/model_pb2.py", LEAKY)
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == SAMPLE_FINDINGS


def test_exclude_pattern_with_slash_matches_the_path_relative_to_the_config(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(sample_project, 'exclude = ["pkg/generated"]\n')
    write(sample_project, "pkg/generated/a.py", LEAKY)
    write(sample_project, "lib/pkg/generated/b.py", LEAKY)
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == [
        ("cache.py", "TL001"),
        ("leaky.py", "TL004"),
        ("lib/pkg/generated/b.py", "TL004"),
    ]


def test_exclude_is_relative_to_the_config_root_not_the_current_directory(
    sample_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(sample_project, 'exclude = ["pkg/generated"]\n')
    write(sample_project, "pkg/generated/a.py", LEAKY)
    write(sample_project, "pkg/ok.py", LEAKY)
    monkeypatch.chdir(sample_project / "pkg")
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == [("ok.py", "TL004")]


def test_exclude_replaces_the_default_excludes(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project, 'exclude = ["generated"]\n')
    write(sample_project, "build/a.py", LEAKY)
    cli(".")
    assert ("build/a.py", "TL004") in files_and_codes(capsys.readouterr().out)


def test_extend_exclude_adds_to_the_default_excludes(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project, 'extend-exclude = ["generated"]\n')
    write(sample_project, "generated/a.py", LEAKY)
    write(sample_project, "build/b.py", LEAKY)
    write(sample_project, ".venv/lib/c.py", LEAKY)
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == SAMPLE_FINDINGS


@pytest.mark.parametrize("folder", [".venv", "build", "__pycache__", ".git"])
def test_default_excludes_are_skipped_when_walking_a_folder(
    sample_project: Path, capsys: pytest.CaptureFixture[str], folder: str
) -> None:
    write(sample_project, f"{folder}/skipped.py", LEAKY)
    write(sample_project, f"pkg/{folder}/skipped.py", LEAKY)
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == SAMPLE_FINDINGS


def test_explicitly_named_excluded_file_is_linted(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project, 'extend-exclude = ["generated"]\n')
    write(sample_project, "generated/a.py", LEAKY)
    write(sample_project, "build/b.py", LEAKY)
    assert cli("generated/a.py", "build/b.py") == 1
    assert files_and_codes(capsys.readouterr().out) == [("build/b.py", "TL004"), ("generated/a.py", "TL004")]


def test_force_exclude_skips_explicitly_named_excluded_files(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(sample_project, 'extend-exclude = ["generated"]\n')
    write(sample_project, "generated/a.py", LEAKY)
    write(sample_project, "build/b.py", LEAKY)
    assert cli("--force-exclude", "generated/a.py", "build/b.py", "leaky.py") == 1
    assert files_and_codes(capsys.readouterr().out) == [("leaky.py", "TL004")]


def test_per_file_ignores_drop_codes_for_matching_files(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(sample_project, '[tool.tensorlint.per-file-ignores]\n"scripts/*" = ["TL004"]\n')
    write(sample_project, "scripts/leaky.py", LEAKY)
    write(sample_project, "scripts/cache.py", CACHE)
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == [
        ("cache.py", "TL001"),
        ("leaky.py", "TL004"),
        ("scripts/cache.py", "TL001"),
    ]


def test_per_file_ignores_pattern_without_slash_matches_file_names(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(sample_project, '[tool.tensorlint.per-file-ignores]\n"test_*.py" = ["TL004"]\n')
    write(sample_project, "pkg/test_leaky.py", LEAKY)
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == SAMPLE_FINDINGS


def test_per_file_ignores_are_relative_to_the_config_root(
    sample_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(sample_project, '[tool.tensorlint.per-file-ignores]\n"pkg/legacy/*" = ["TL004"]\n')
    write(sample_project, "pkg/legacy/old.py", LEAKY)
    write(sample_project, "pkg/new.py", LEAKY)
    monkeypatch.chdir(sample_project / "pkg")
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == [("new.py", "TL004")]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        pytest.param('[tool.tensorlint]\nselectt = ["TL001"]\n', ["selectt"], id="unknown-key"),
        pytest.param(
            '[tool.tensorlint]\nextend_select = ["TL900"]\n',
            ["'extend_select'", "did you mean 'extend-select'"],
            id="unknown-key-suggests-the-known-one",
        ),
        pytest.param('[tool.tensorlint]\nignore = ["TL999"]\n', ["TL999"], id="unknown-code"),
        pytest.param('[tool.tensorlint]\nextend-select = ["TL9999"]\n', ["TL9999"], id="unknown-code-in-extend-select"),
        pytest.param(
            '[tool.tensorlint]\n[tool.tensorlint.per-file-ignores]\n"tests/*" = ["XX1"]\n',
            ["XX1"],
            id="unknown-code-in-per-file-ignores",
        ),
        pytest.param("[tool.tensorlint]\nselect = 1\n", ["select"], id="wrong-value-type"),
        pytest.param('[tool.tensorlint\nselect = ["TL001"]\n', ["pyproject.toml"], id="invalid-toml"),
    ],
)
def test_a_bad_configuration_exits_2_and_says_what_is_wrong(
    sample_project: Path, capsys: pytest.CaptureFixture[str], text: str, said: list[str]
) -> None:
    write(sample_project, "pyproject.toml", text)
    assert cli(".") == 2
    captured = capsys.readouterr()
    assert all(words in captured.err for words in said), captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_cli_select_overrides_config_select(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project, 'select = ["TL004"]\n')
    cli("--select", "TL001", ".")
    assert files_and_codes(capsys.readouterr().out) == [("cache.py", "TL001")]


def test_config_ignore_still_applies_with_cli_select(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project, 'ignore = ["TL001"]\n')
    cli("--select", "TL001,TL004", ".")
    assert files_and_codes(capsys.readouterr().out) == [("leaky.py", "TL004")]


def test_per_file_ignores_still_apply_with_cli_select(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project, '[tool.tensorlint.per-file-ignores]\n"leaky.py" = ["TL004"]\n')
    assert cli("--select", "TL004", ".") == 0
    assert files_and_codes(capsys.readouterr().out) == []


def test_extend_select_adds_an_opt_in_rule_to_the_default_selection(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(sample_project, "stale.py", "import torch\nx = torch.zeros(1)  # noqa: TL004\n")
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == SAMPLE_FINDINGS
    pyproject(sample_project, 'extend-select = ["TL900"]\n')
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == [
        ("cache.py", "TL001"),
        ("leaky.py", "TL004"),
        ("stale.py", "TL900"),
    ]


def test_extend_select_on_the_command_line_adds_to_a_cli_select(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli("--select", "TL001", "--extend-select", "TL004", ".")
    assert files_and_codes(capsys.readouterr().out) == SAMPLE_FINDINGS


def test_each_file_gets_the_nearest_configuration(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project, 'select = ["TL004"]\n')
    pyproject(sample_project / "sub", 'select = ["TL001"]\n')
    write(sample_project, "sub/leaky.py", LEAKY)
    write(sample_project, "sub/cache.py", CACHE)
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == [("leaky.py", "TL004"), ("sub/cache.py", "TL001")]


def test_nested_configuration_excludes_apply_below_it(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project / "sub", 'extend-exclude = ["generated"]\n')
    write(sample_project, "sub/generated/a.py", LEAKY)
    write(sample_project, "generated/b.py", LEAKY)
    cli(".")
    assert files_and_codes(capsys.readouterr().out) == [
        ("cache.py", "TL001"),
        ("generated/b.py", "TL004"),
        ("leaky.py", "TL004"),
    ]


def test_config_option_applies_one_file_to_every_path(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project / "sub", 'select = ["TL001"]\n')
    write(sample_project, "sub/leaky.py", LEAKY)
    write(sample_project, "ci.toml", '[tool.tensorlint]\nselect = ["TL004"]\n')
    cli("--config", "ci.toml", ".")
    assert files_and_codes(capsys.readouterr().out) == [("leaky.py", "TL004"), ("sub/leaky.py", "TL004")]


def test_config_option_with_a_missing_file_exits_2(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("--config", "nope.toml", ".") == 2
    assert "nope.toml" in capsys.readouterr().err


def test_config_option_without_a_tensorlint_table_exits_2(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(sample_project, "other.toml", "[tool.black]\nline-length = 100\n")
    assert cli("--config", "other.toml", ".") == 2
    assert "[tool.tensorlint]" in capsys.readouterr().err


def test_isolated_ignores_every_configuration_file(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(sample_project, 'select = ["TL001"]\nunknown-key = 1\n')
    assert cli("--isolated", ".") == 1
    assert files_and_codes(capsys.readouterr().out) == SAMPLE_FINDINGS


def test_isolated_and_config_cannot_be_combined(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(sample_project, "ci.toml", '[tool.tensorlint]\nselect = ["TL004"]\n')
    assert cli("--isolated", "--config", "ci.toml", ".") == 2
    assert "--isolated" in capsys.readouterr().err
