"""`[tool.tensorlint]` in pyproject.toml: selection, excludes, per-file-ignores, and errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import cli

LEAKY = """\
import torch
from torch import nn

model = nn.Linear(4, 2)

def evaluate(loader):
    total = 0.0
    for x, y in loader:
        total += nn.functional.cross_entropy(model(x), y)
    return total
"""

CACHE = """\
import torch
from torch import nn


class Recorder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.cache = []

    def forward(self, x):
        h = self.fc(x)
        self.cache.append(h)
        return h
"""


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def pyproject(root: Path, body: str) -> Path:
    return write(root, "pyproject.toml", "[tool.tensorlint]\n" + textwrap.dedent(body))


def reported(out: str) -> list[tuple[str, str]]:
    """(file, code) of each concise output line that reports a finding."""
    found = []
    for line in out.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[1].isdigit() and parts[2].isdigit():
            found.append((parts[0], parts[3].split()[0]))
    return found


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with one TL004 file and one TL001 file, as the current directory."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "leaky.py", LEAKY)
    write(tmp_path, "cache.py", CACHE)
    return tmp_path


def test_config_select_limits_the_codes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'select = ["TL001"]\n')
    assert cli(".") == 1
    assert reported(capsys.readouterr().out) == [("cache.py", "TL001")]


def test_config_ignore_drops_codes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'ignore = ["TL001"]\n')
    cli(".")
    assert reported(capsys.readouterr().out) == [("leaky.py", "TL004")]


def test_config_selectors_accept_prefixes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'select = ["TL00"]\nignore = ["TL0"]\n')
    assert cli(".") == 0
    assert reported(capsys.readouterr().out) == []


def test_config_in_a_parent_folder_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(project, 'select = ["TL001"]\n')
    write(project, "pkg/inner/leaky.py", LEAKY)
    write(project, "pkg/inner/cache.py", CACHE)
    monkeypatch.chdir(project / "pkg" / "inner")
    cli(".")
    assert reported(capsys.readouterr().out) == [("cache.py", "TL001")]


def test_pyproject_without_a_tensorlint_table_is_skipped_when_searching_upward(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(project, 'select = ["TL001"]\n')
    write(project, "sub/pyproject.toml", '[project]\nname = "sub"\n\n[tool.black]\nline-length = 100\n')
    write(project, "sub/leaky.py", LEAKY)
    write(project, "sub/cache.py", CACHE)
    monkeypatch.chdir(project / "sub")
    cli(".")
    assert reported(capsys.readouterr().out) == [("cache.py", "TL001")]


def test_nearest_tensorlint_table_wins(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(project, 'select = ["TL001"]\n')
    pyproject(project / "sub", 'select = ["TL004"]\n')
    write(project, "sub/leaky.py", LEAKY)
    write(project, "sub/cache.py", CACHE)
    monkeypatch.chdir(project / "sub")
    cli(".")
    assert reported(capsys.readouterr().out) == [("leaky.py", "TL004")]


def test_exclude_pattern_without_slash_matches_any_path_component(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(project, 'exclude = ["generated"]\n')
    write(project, "generated/a.py", LEAKY)
    write(project, "pkg/generated/b.py", LEAKY)
    write(project, "pkg/generated_not/c.py", LEAKY)
    cli(".")
    assert reported(capsys.readouterr().out) == [
        ("cache.py", "TL001"),
        ("leaky.py", "TL004"),
        ("pkg/generated_not/c.py", "TL004"),
    ]


def test_exclude_pattern_without_slash_matches_file_names_by_glob(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(project, 'exclude = ["*_pb2.py"]\n')
    write(project, "pkg/model_pb2.py", LEAKY)
    cli(".")
    assert reported(capsys.readouterr().out) == [("cache.py", "TL001"), ("leaky.py", "TL004")]


def test_exclude_pattern_with_slash_matches_the_path_relative_to_the_config(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(project, 'exclude = ["pkg/generated"]\n')
    write(project, "pkg/generated/a.py", LEAKY)
    write(project, "lib/pkg/generated/b.py", LEAKY)
    cli(".")
    assert reported(capsys.readouterr().out) == [
        ("cache.py", "TL001"),
        ("leaky.py", "TL004"),
        ("lib/pkg/generated/b.py", "TL004"),
    ]


def test_exclude_is_relative_to_the_config_root_not_the_current_directory(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(project, 'exclude = ["pkg/generated"]\n')
    write(project, "pkg/generated/a.py", LEAKY)
    write(project, "pkg/ok.py", LEAKY)
    monkeypatch.chdir(project / "pkg")
    cli(".")
    assert reported(capsys.readouterr().out) == [("ok.py", "TL004")]


def test_exclude_replaces_the_default_excludes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'exclude = ["generated"]\n')
    write(project, "build/a.py", LEAKY)
    cli(".")
    assert ("build/a.py", "TL004") in reported(capsys.readouterr().out)


def test_extend_exclude_adds_to_the_default_excludes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'extend-exclude = ["generated"]\n')
    write(project, "generated/a.py", LEAKY)
    write(project, "build/b.py", LEAKY)
    write(project, ".venv/lib/c.py", LEAKY)
    cli(".")
    assert reported(capsys.readouterr().out) == [("cache.py", "TL001"), ("leaky.py", "TL004")]


@pytest.mark.parametrize("folder", [".venv", "build", "__pycache__", ".git"])
def test_default_excludes_are_skipped_when_walking_a_folder(
    project: Path, capsys: pytest.CaptureFixture[str], folder: str
) -> None:
    write(project, f"{folder}/skipped.py", LEAKY)
    write(project, f"pkg/{folder}/skipped.py", LEAKY)
    cli(".")
    assert reported(capsys.readouterr().out) == [("cache.py", "TL001"), ("leaky.py", "TL004")]


def test_explicitly_named_excluded_file_is_linted(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'extend-exclude = ["generated"]\n')
    write(project, "generated/a.py", LEAKY)
    write(project, "build/b.py", LEAKY)
    assert cli("generated/a.py", "build/b.py") == 1
    assert reported(capsys.readouterr().out) == [("build/b.py", "TL004"), ("generated/a.py", "TL004")]


def test_force_exclude_skips_explicitly_named_excluded_files(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'extend-exclude = ["generated"]\n')
    write(project, "generated/a.py", LEAKY)
    write(project, "build/b.py", LEAKY)
    assert cli("--force-exclude", "generated/a.py", "build/b.py", "leaky.py") == 1
    assert reported(capsys.readouterr().out) == [("leaky.py", "TL004")]


def test_per_file_ignores_drop_codes_for_matching_files(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, '[tool.tensorlint.per-file-ignores]\n"tests/*" = ["TL004"]\n')
    write(project, "tests/test_leaky.py", LEAKY)
    write(project, "tests/test_cache.py", CACHE)
    cli(".")
    assert reported(capsys.readouterr().out) == [
        ("cache.py", "TL001"),
        ("leaky.py", "TL004"),
        ("tests/test_cache.py", "TL001"),
    ]


def test_per_file_ignores_pattern_without_slash_matches_file_names(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(project, '[tool.tensorlint.per-file-ignores]\n"test_*.py" = ["TL004"]\n')
    write(project, "pkg/test_leaky.py", LEAKY)
    cli(".")
    assert reported(capsys.readouterr().out) == [("cache.py", "TL001"), ("leaky.py", "TL004")]


def test_per_file_ignores_are_relative_to_the_config_root(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject(project, '[tool.tensorlint.per-file-ignores]\n"pkg/legacy/*" = ["TL004"]\n')
    write(project, "pkg/legacy/old.py", LEAKY)
    write(project, "pkg/new.py", LEAKY)
    monkeypatch.chdir(project / "pkg")
    cli(".")
    assert reported(capsys.readouterr().out) == [("new.py", "TL004")]


def test_unknown_key_exits_2_naming_the_key(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'selectt = ["TL001"]\n')
    assert cli(".") == 2
    captured = capsys.readouterr()
    assert "selectt" in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_unknown_code_in_config_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'ignore = ["TL999"]\n')
    assert cli(".") == 2
    assert "TL999" in capsys.readouterr().err


def test_unknown_code_in_per_file_ignores_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, '[tool.tensorlint.per-file-ignores]\n"tests/*" = ["XX1"]\n')
    assert cli(".") == 2
    assert "XX1" in capsys.readouterr().err


def test_wrong_value_type_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, "select = 1\n")
    assert cli(".") == 2
    assert "select" in capsys.readouterr().err


def test_invalid_toml_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "pyproject.toml", '[tool.tensorlint\nselect = ["TL001"]\n')
    assert cli(".") == 2
    captured = capsys.readouterr()
    assert "pyproject.toml" in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_cli_select_overrides_config_select(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'select = ["TL004"]\n')
    cli("--select", "TL001", ".")
    assert reported(capsys.readouterr().out) == [("cache.py", "TL001")]


def test_config_ignore_still_applies_with_cli_select(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'ignore = ["TL001"]\n')
    cli("--select", "TL001,TL004", ".")
    assert reported(capsys.readouterr().out) == [("leaky.py", "TL004")]


def test_per_file_ignores_still_apply_with_cli_select(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, '[tool.tensorlint.per-file-ignores]\n"leaky.py" = ["TL004"]\n')
    assert cli("--select", "TL004", ".") == 0
    assert reported(capsys.readouterr().out) == []


def test_extend_select_adds_an_opt_in_rule_to_the_default_selection(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, "stale.py", "import torch\nx = torch.zeros(1)  # noqa: TL004\n")
    cli(".")
    assert reported(capsys.readouterr().out) == [("cache.py", "TL001"), ("leaky.py", "TL004")]
    pyproject(project, 'extend-select = ["TL900"]\n')
    cli(".")
    assert reported(capsys.readouterr().out) == [("cache.py", "TL001"), ("leaky.py", "TL004"), ("stale.py", "TL900")]


def test_extend_select_on_the_command_line_adds_to_a_cli_select(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli("--select", "TL001", "--extend-select", "TL004", ".")
    assert reported(capsys.readouterr().out) == [("cache.py", "TL001"), ("leaky.py", "TL004")]


def test_unknown_code_in_extend_select_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'extend-select = ["TL9999"]\n')
    assert cli(".") == 2
    assert "TL9999" in capsys.readouterr().err


def test_unknown_key_suggests_the_known_one(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'extend_select = ["TL900"]\n')
    assert cli(".") == 2
    err = capsys.readouterr().err
    assert "'extend_select'" in err and "did you mean 'extend-select'" in err


def test_each_file_gets_the_nearest_configuration(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'select = ["TL004"]\n')
    pyproject(project / "sub", 'select = ["TL001"]\n')
    write(project, "sub/leaky.py", LEAKY)
    write(project, "sub/cache.py", CACHE)
    cli(".")
    assert reported(capsys.readouterr().out) == [("leaky.py", "TL004"), ("sub/cache.py", "TL001")]


def test_nested_configuration_excludes_apply_below_it(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project / "sub", 'extend-exclude = ["generated"]\n')
    write(project, "sub/generated/a.py", LEAKY)
    write(project, "generated/b.py", LEAKY)
    cli(".")
    assert reported(capsys.readouterr().out) == [
        ("cache.py", "TL001"),
        ("generated/b.py", "TL004"),
        ("leaky.py", "TL004"),
    ]


def test_config_option_applies_one_file_to_every_path(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project / "sub", 'select = ["TL001"]\n')
    write(project, "sub/leaky.py", LEAKY)
    write(project, "ci.toml", '[tool.tensorlint]\nselect = ["TL004"]\n')
    cli("--config", "ci.toml", ".")
    assert reported(capsys.readouterr().out) == [("leaky.py", "TL004"), ("sub/leaky.py", "TL004")]


def test_config_option_with_a_missing_file_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("--config", "nope.toml", ".") == 2
    assert "nope.toml" in capsys.readouterr().err


def test_config_option_without_a_tensorlint_table_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "other.toml", "[tool.black]\nline-length = 100\n")
    assert cli("--config", "other.toml", ".") == 2
    assert "[tool.tensorlint]" in capsys.readouterr().err


def test_isolated_ignores_every_configuration_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject(project, 'select = ["TL001"]\nunknown-key = 1\n')
    assert cli("--isolated", ".") == 1
    assert reported(capsys.readouterr().out) == [("cache.py", "TL001"), ("leaky.py", "TL004")]


def test_isolated_and_config_cannot_be_combined(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "ci.toml", '[tool.tensorlint]\nselect = ["TL004"]\n')
    assert cli("--isolated", "--config", "ci.toml", ".") == 2
    assert "--isolated" in capsys.readouterr().err
