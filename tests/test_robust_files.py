"""The file system: whatever a folder holds, each odd path gets one clear line, and the run goes on."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

import tensorlint.fixing
import tensorlint.runner
import tensorlint.source
from helpers import cli, reported
from samples import LEAKY, LEAKY_ROW


def _finish_within(seconds: float, *args: str) -> int:
    """Run the CLI in a thread: a read that blocks (a FIFO) fails the test instead of hanging it."""
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(cli(*args)), daemon=True)
    thread.start()
    thread.join(seconds)
    assert result, f"tensorlint {' '.join(args)} did not finish within {seconds} s"
    return result[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_skipped_in_a_folder_and_named_never_read(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(sample_project / "pipe.py")
    assert _finish_within(20, "-j", "1", ".") == 1
    out, err = capsys.readouterr()
    assert "tensorlint: warning: pipe.py: skipped: not a regular file (a FIFO)" in err
    assert ("leaky.py", LEAKY_ROW, "TL004") in reported(out)
    assert _finish_within(20, "-j", "1", "pipe.py", "leaky.py") == 1
    assert "pipe.py: skipped: not a regular file (a FIFO)" in capsys.readouterr().err


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_a_link_to_a_device_is_skipped(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (sample_project / "zero.py").symlink_to("/dev/zero")  # reading it would never end
    assert _finish_within(20, "-j", "1", ".") == 1
    assert "zero.py: skipped: not a regular file (a character device)" in capsys.readouterr().err


def test_a_fifo_swapped_in_after_discovery_is_reported_not_read(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs FIFOs")
    os.mkfifo(tmp_path / "late.py")
    with pytest.raises(OSError, match=r"not a regular file \(a FIFO\)"):
        tensorlint.source.read_regular_file(tmp_path / "late.py")


def test_broken_links_and_link_loops_are_skipped(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (sample_project / "broken.py").symlink_to(sample_project / "gone.py")
    (sample_project / "loop.py").symlink_to(sample_project / "loop.py")
    (sample_project / "linked.py").symlink_to(sample_project / "leaky.py")  # a link to a file is checked
    assert cli("-j", "1", ".") == 1
    out, err = capsys.readouterr()
    assert "tensorlint: warning: broken.py: skipped: a broken symbolic link" in err
    assert "tensorlint: warning: loop.py: skipped: Too many levels of symbolic links" in err
    assert {("leaky.py", LEAKY_ROW, "TL004"), ("linked.py", LEAKY_ROW, "TL004")} <= set(reported(out))


def test_a_folder_loop_of_links_is_walked_once(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (sample_project / "sub").mkdir()
    (sample_project / "sub" / "up").symlink_to(sample_project, target_is_directory=True)
    assert cli("-j", "1", ".") == 1
    assert [r for r in reported(capsys.readouterr().out) if r[2] == "TL004"] == [("leaky.py", LEAKY_ROW, "TL004")]


def test_a_folder_named_like_a_module_is_walked_into(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (sample_project / "x.py").mkdir()
    (sample_project / "x.py" / "inner.py").write_text(LEAKY, encoding="utf-8")
    assert cli("-j", "1", ".") == 1
    assert ("x.py/inner.py", LEAKY_ROW, "TL004") in reported(capsys.readouterr().out)


def test_an_unreadable_file_is_reported_and_the_run_goes_on(
    sample_project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # CI runs as root, which reads files whatever their mode: the denial is simulated.
    secret = sample_project / "secret.py"
    secret.write_text(LEAKY, encoding="utf-8")
    real = tensorlint.source.read_regular_file

    def denied(path: Path) -> bytes:
        if Path(path).name == "secret.py":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    for module in (tensorlint.source, tensorlint.runner):
        monkeypatch.setattr(module, "read_regular_file", denied)
    assert cli("-j", "1", "--no-cache", "secret.py", "leaky.py") == 1
    out = capsys.readouterr().out
    assert "secret.py:1:1: cannot read file: Permission denied" in out
    assert ("leaky.py", LEAKY_ROW, "TL004") in reported(out)


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root reads any file")
def test_a_file_with_mode_000_is_reported(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (sample_project / "secret.py").write_text(LEAKY, encoding="utf-8")
    (sample_project / "secret.py").chmod(0)
    assert cli("-j", "1", "--no-cache", "secret.py", "leaky.py") == 1
    assert "secret.py:1:1: cannot read file: Permission denied" in capsys.readouterr().out


def test_a_file_deleted_between_discovery_and_reading(
    sample_project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (sample_project / "gone.py").write_text(LEAKY, encoding="utf-8")
    real = tensorlint.runner.check_files

    def delete_first(tasks: list[tensorlint.runner.Task], **options: object) -> object:
        (sample_project / "gone.py").unlink()
        return real(tasks, **options)  # type: ignore[arg-type]

    monkeypatch.setattr("tensorlint.cli.check_files", delete_first)
    assert cli("-j", "1", "--no-cache", ".") == 1
    out = capsys.readouterr().out
    assert "gone.py:1:1: cannot read file: No such file or directory" in out
    assert ("leaky.py", LEAKY_ROW, "TL004") in reported(out)


def test_a_file_replaced_by_a_folder_during_a_fix_run(
    sample_project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tensorlint.fixing.fix_file

    def replace_then_fix(run: object, path: Path, *rest: object) -> None:
        if path.name == "cache.py":
            path.unlink()
            path.mkdir()
        real(run, path, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(tensorlint.fixing, "fix_file", replace_then_fix)
    assert cli("--fix", "-j", "1", ".") == 1
    out, err = capsys.readouterr()
    assert "cache.py:1:1: cannot read file: Is a directory" in out
    assert "Traceback" not in err


@pytest.mark.parametrize("name", ["with space.py", "ünïcödé_模型.py", "-dash.py"])
def test_paths_with_spaces_and_non_ascii_names(
    sample_project: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    (sample_project / "sub dir").mkdir()
    (sample_project / "sub dir" / name).write_text(LEAKY, encoding="utf-8")
    assert cli("-j", "1", "--output-format", "concise", "--", "sub dir") == 1
    assert reported(capsys.readouterr().out) == [(f"sub dir/{name}", LEAKY_ROW, "TL004")]


@pytest.mark.skipif(sys.platform != "linux", reason="Linux file names may be any bytes")
def test_a_file_name_that_is_not_utf_8(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = os.fsdecode(b"caf\xe9.py")  # a surrogate escape in Python's view of the name
    (sample_project / name).write_text(LEAKY, encoding="utf-8")
    for output_format in ("concise", "json", "sarif", "junit", "github", "gitlab"):
        assert cli("-j", "1", "--output-format", output_format, ".") == 1
        out = capsys.readouterr().out
        out.encode("utf-8")  # printable: no lone surrogate reaches the report
