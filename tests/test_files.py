"""Which files a run checks: recursion, suffixes, order, .gitignore, duplicates, the config root."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import cli, write
from samples import LEAKY


def checked(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    """The files reported, in output order; every file written here holds one TL004."""
    cli("-q", *args)
    return [line.split(":", 1)[0] for line in capsys.readouterr().out.splitlines()]


def test_folders_are_searched_recursively(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "top.py", LEAKY)
    write(project, "pkg/mid.py", LEAKY)
    write(project, "pkg/deep/deeper/bottom.py", LEAKY)
    assert checked(capsys, ".") == ["pkg/deep/deeper/bottom.py", "pkg/mid.py", "top.py"]


def test_only_py_pyi_and_ipynb_files_are_checked_in_folders(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "module.py", LEAKY)
    write(project, "stub.pyi", LEAKY)
    write(project, "notebook.ipynb", LEAKY)  # Python text, not notebook JSON: reported as unreadable
    for name in ("notes.txt", "script", "module.pyc", "module.py.orig", "notebook.ipynb.txt"):
        write(project, name, LEAKY)
    assert checked(capsys, ".") == ["module.py", "notebook.ipynb", "stub.pyi"]


def test_reported_paths_keep_the_spelling_of_the_named_folder(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, "pkg/a.py", LEAKY)
    assert checked(capsys, "pkg") == ["pkg/a.py"]
    assert checked(capsys, str(project / "pkg")) == [str(project / "pkg" / "a.py")]


def test_output_order_is_sorted_and_stable(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("zeta.py", "b/one.py", "alpha.py", "a/two.py", "Beta.py", "a/b/three.py"):
        write(project, name, LEAKY)
    expected = ["Beta.py", "a/b/three.py", "a/two.py", "alpha.py", "b/one.py", "zeta.py"]
    assert checked(capsys, ".") == expected
    assert checked(capsys, "zeta.py", "b", "alpha.py", "a", "Beta.py") == expected


def test_folder_walk_yields_files_in_sorted_order(project: Path) -> None:
    from tensorlint.config import Config
    from tensorlint.files import discover

    for name in ("zeta.py", "b/one.py", "alpha.py", "a/two.py", "a/b/three.py"):
        write(project, name, LEAKY)
    found = [path.as_posix() for path in discover([Path(".")], Config())]
    assert found == ["alpha.py", "zeta.py", "a/two.py", "a/b/three.py", "b/one.py"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_gitignore_is_respected_inside_a_git_work_tree(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    write(project, ".gitignore", "ignored_dir/\ngen_*.py\n")
    write(project, "kept.py", LEAKY)
    write(project, "gen_models.py", LEAKY)
    write(project, "ignored_dir/a.py", LEAKY)
    write(project, "pkg/ignored_dir/b.py", LEAKY)
    write(project, "pkg/gen_c.py", LEAKY)
    assert checked(capsys, ".") == ["kept.py"]


def test_gitignore_is_respected_when_git_is_a_plain_folder(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / ".git").mkdir()
    write(project, ".gitignore", "/scratch.py\n")
    write(project, "scratch.py", LEAKY)
    write(project, "pkg/scratch.py", LEAKY)
    assert checked(capsys, ".") == ["pkg/scratch.py"]


def test_nested_gitignore_applies_below_its_folder(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / ".git").mkdir()
    write(project, ".gitignore", "top_secret.py\n")
    write(project, "pkg/sub/.gitignore", "secret.py\n")
    write(project, "top_secret.py", LEAKY)
    write(project, "secret.py", LEAKY)
    write(project, "pkg/secret.py", LEAKY)
    write(project, "pkg/sub/secret.py", LEAKY)
    write(project, "pkg/sub/deeper/secret.py", LEAKY)
    write(project, "pkg/sub/deeper/top_secret.py", LEAKY)
    write(project, "pkg/sub/kept.py", LEAKY)
    assert checked(capsys, ".") == ["pkg/secret.py", "pkg/sub/kept.py", "secret.py"]


def test_gitignore_of_a_parent_folder_applies_when_checking_a_subfolder(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".git").mkdir()
    write(project, ".gitignore", "generated/\n")
    write(project, "pkg/generated/a.py", LEAKY)
    write(project, "pkg/b.py", LEAKY)
    assert checked(capsys, "pkg") == ["pkg/b.py"]


def test_respect_gitignore_false_turns_gitignore_off(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / ".git").mkdir()
    write(project, ".gitignore", "ignored.py\n")
    write(project, "pyproject.toml", "[tool.tensorlint]\nrespect-gitignore = false\n")
    write(project, "ignored.py", LEAKY)
    write(project, "kept.py", LEAKY)
    assert checked(capsys, ".") == ["ignored.py", "kept.py"]


def test_path_given_twice_is_linted_once(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "a.py", LEAKY)
    assert checked(capsys, "a.py", "a.py", "./a.py") == ["a.py"]


def test_file_also_inside_a_named_folder_is_linted_once(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "pkg/a.py", LEAKY)
    assert checked(capsys, "pkg", "pkg/a.py") == ["pkg/a.py"]


def test_folder_given_twice_is_linted_once(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "pkg/a.py", LEAKY)
    assert checked(capsys, "pkg", "pkg") == ["pkg/a.py"]


def test_checkout_inside_a_folder_named_build_is_not_excluded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout = tmp_path / "build" / "project"
    write(checkout, "pyproject.toml", '[tool.tensorlint]\nselect = ["TL"]\n')
    write(checkout, "src/a.py", LEAKY)
    write(checkout, "build/generated.py", LEAKY)  # a `build` folder inside the checkout is still excluded
    monkeypatch.chdir(checkout)
    assert checked(capsys, ".") == ["src/a.py"]
    assert checked(capsys, str(checkout / "src")) == [str(checkout / "src" / "a.py")]


def test_checkout_inside_a_folder_named_build_without_config_is_not_excluded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout = tmp_path / "build" / "project"
    write(checkout, "src/a.py", LEAKY)
    monkeypatch.chdir(checkout)
    assert checked(capsys, ".") == ["src/a.py"]
