"""`--help`, as ruff users expect it: the commands with one line each, and every command's own help."""

from __future__ import annotations

import re

import pytest

from helpers import ROOT, run_tensorlint
from tensorlint.arguments import COMMANDS
from tensorlint.cli import HANDLERS


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_every_command_with_one_line(flag: str) -> None:
    result = run_tensorlint(flag)
    assert result.returncode == 0, result.stderr
    listed = dict(re.findall(r"^  ([a-z]+)  +(\S.*)$", result.stdout.split("Commands:")[1].split("\n\n")[0], re.M))
    assert listed == COMMANDS


def test_every_command_that_runs_is_listed() -> None:
    assert set(HANDLERS) | {"check"} == set(COMMANDS) | {"lsp"}  # lsp: the server's other name


@pytest.mark.parametrize("command", [*COMMANDS, "lsp"])
def test_every_command_prints_its_help_and_exits_0(command: str) -> None:
    # With stdin closed, a server that started instead would print no usage line.
    result = run_tensorlint(command, "--help", stdin="", timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: tensorlint {'server' if command == 'lsp' else command} ")


def test_server_refuses_an_unknown_flag_instead_of_starting() -> None:
    result = run_tensorlint("server", "--no-such-flag", stdin="", timeout=60)
    assert result.returncode == 2
    assert "tensorlint: error: unrecognized arguments: --no-such-flag" in result.stderr


def test_readme_links_the_editor_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## Editors" in readme and "(docs/editors.md)" in readme
