"""What the command line says after its findings: the count and the fix hint in ruff's words (and
in a pre-commit hook's), `--show-fixes` agreeing with them, and no success line beside an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import ROOT, cli, run_module, run_tensorlint
from samples import LEAKY

HIDDEN_HINT = "1 unsafe fix available with `--fix --unsafe-fixes`."
HOOK_HINT = (
    "1 unsafe fix available with `args: [--fix, --unsafe-fixes]` in the tensorlint hook of .pre-commit-config.yaml."
)


def closing(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    cli(*args)
    return capsys.readouterr().out.splitlines()[-2:]


def test_a_missing_path_alone_prints_no_success_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("nosuch.py") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "nosuch.py: No such file or directory" in captured.err


def test_a_missing_path_beside_a_clean_file_prints_no_success_line(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli("nosuch.py", "clean.py") == 2
    assert "All checks passed!" not in capsys.readouterr().out


def test_findings_beside_a_missing_path_are_still_counted(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert closing(capsys, "nosuch.py", "leaky.py") == ["Found 1 error.", HIDDEN_HINT]


def test_fix_with_only_unsafe_fixes_says_how_to_enable_them(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert closing(capsys, "--fix", "leaky.py") == ["Found 1 error.", HIDDEN_HINT]
    assert (sample_project / "leaky.py").read_text(encoding="utf-8") == LEAKY


def test_fix_counts_what_it_fixed_and_what_remains(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # cache.py's TL001 has no fix: nothing to hint at
    assert (
        closing(capsys, "--fix", "--unsafe-fixes", "leaky.py", "cache.py")[-1]
        == "Found 2 errors (1 fixed, 1 remaining)."
    )


def test_show_fixes_announces_what_the_closing_line_says(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli("--show-fixes", "leaky.py")
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == HIDDEN_HINT
    assert HIDDEN_HINT[:-1] + ":" in lines  # the listing's header, in the same words
    assert not any(line.endswith(("fix available:", "fixes available:")) and "unsafe" not in line for line in lines)


def test_in_the_pre_commit_hook_the_hint_names_the_hooks_args(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert closing(capsys, "--pre-commit", "leaky.py")[-1] == HOOK_HINT
    assert closing(capsys, "--pre-commit", "--fix", "leaky.py")[-1] == HOOK_HINT
    # a hook that has `--unsafe-fixes` in its args keeps it in the args it is told to use
    assert closing(capsys, "--pre-commit", "--unsafe-fixes", "leaky.py")[-1] == (
        "[*] 1 fixable with `args: [--fix, --unsafe-fixes]` in the tensorlint hook of .pre-commit-config.yaml."
    )


def test_the_hook_entry_says_it_runs_in_pre_commit() -> None:
    yaml = pytest.importorskip("yaml")
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert "--pre-commit" in hook["entry"].split()


@pytest.mark.parametrize("fix", [[], ["--fix"]], ids=["check", "fix"])
def test_the_closing_lines_are_ruffs_words(tmp_path: Path, fix: list[str]) -> None:
    """ruff and tensorlint, each on a file with one finding whose only fix is unsafe."""
    pytest.importorskip("ruff")
    (tmp_path / "b006.py").write_text("def f(a=[]):\n    return a\n", encoding="utf-8")
    (tmp_path / "leaky.py").write_text(LEAKY, encoding="utf-8")
    ruff = run_module("ruff", "check", "--isolated", "--no-cache", "--select", "B006", *fix, "b006.py", cwd=tmp_path)
    ours = run_tensorlint(*fix, "leaky.py", cwd=tmp_path)
    assert ruff.stdout.splitlines()[-2:] == ours.stdout.splitlines()[-2:] == ["Found 1 error.", HIDDEN_HINT]
