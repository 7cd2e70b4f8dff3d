"""Faults: a file that hangs its check, a worker that dies, Ctrl-C, and a run killed while it writes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import tensorlint.engine
from helpers import ROOT, forked_workers, run_tensorlint
from samples import write_leaky_files
from tensorlint import files
from tensorlint.files import TEMPORARY_SUFFIX, write_atomically
from tensorlint.findings import Finding
from tensorlint.rules import default_codes
from tensorlint.runner import Task, check_files
from tensorlint.time_limit import TimeLimitExceeded

CODES = frozenset(default_codes())


def _slow_on(monkeypatch: pytest.MonkeyPatch, slow: Path, *, stuck_in_native_code: bool = False) -> None:
    real = tensorlint.engine.lint_file_and_dependencies

    def slow_analysis(path: Path, **options: object) -> tuple[list[Finding], list[Path]]:
        deadline = time.monotonic() + 60
        while path == slow:
            # The soft limit raises once: the whole loop sits in the `try`, so that it lands there
            # wherever it comes (it once landed in the loop's own condition, outside the `try`).
            try:
                while time.monotonic() < deadline:
                    if stuck_in_native_code:
                        sum(range(10**5))  # working, as a parser does
                    else:
                        time.sleep(0.05)
                break
            except TimeLimitExceeded:
                if not stuck_in_native_code:  # native code never sees the exception
                    raise
        return real(path, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(tensorlint.engine, "lint_file_and_dependencies", slow_analysis)


@pytest.mark.parametrize("jobs", [1, pytest.param(2, marks=forked_workers)])
def test_a_file_over_the_time_limit_is_reported_and_the_rest_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    paths = write_leaky_files(tmp_path, 6)
    _slow_on(monkeypatch, paths[2])
    started = time.monotonic()
    results = list(check_files([Task(p, CODES, time_limit=0.5) for p in paths], jobs=jobs))
    assert time.monotonic() - started < 30
    [late] = results[2].findings
    assert (
        late.code is None
        and late.message == "not checked: took longer than the time limit of 0.5 s per file (--timeout)"
    )
    assert all(c.findings[0].code == "TL004" for i, c in enumerate(results) if i != 2)


@forked_workers
def test_a_worker_stuck_in_native_code_is_ended_by_the_watchdog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = write_leaky_files(tmp_path, 8)
    _slow_on(monkeypatch, paths[5], stuck_in_native_code=True)
    started = time.monotonic()
    results = list(check_files([Task(p, CODES, time_limit=0.5) for p in paths], jobs=2))
    assert time.monotonic() - started < 40
    [late] = results[5].findings
    assert "took longer than the time limit of 0.5 s" in late.message and "stopped in native code" in late.message
    assert all(c.findings[0].code == "TL004" for i, c in enumerate(results) if i != 5)


def test_timeout_flag_reaches_the_check_and_rejects_nonsense(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import torch\n", encoding="utf-8")
    for bad in ("-1", "soon", "nan"):
        assert run_tensorlint("--timeout", bad, "a.py", cwd=tmp_path).returncode == 2
    assert run_tensorlint("--timeout", "0", "a.py", cwd=tmp_path).returncode == 0


CTRL_C_DRIVER = """
import os, signal, sys, time
import tensorlint.engine
from tensorlint.cli import main

# As in a terminal: a suite started in the background of a shell script inherits SIGINT ignored,
# and Python then leaves it ignored (rightly: so would the CLI).
signal.signal(signal.SIGINT, signal.default_int_handler)

def slow(path, **options):
    open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
    time.sleep(0.5)
    return [], []

tensorlint.engine.lint_file_and_dependencies = slow
sys.exit(main(["-j", "2", "--no-cache", sys.argv[2]]))
"""


@forked_workers
def test_ctrl_c_exits_130_without_a_traceback_and_ends_the_workers(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    for index in range(200):
        (source / f"m{index}.py").write_text("import torch\n", encoding="utf-8")
    pids = tmp_path / "pids"
    pids.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_DRIVER, str(pids), str(source)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not list(pids.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)  # the workers are checking files
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert stderr.strip().endswith("tensorlint: interrupted") and "Traceback" not in stderr
    assert len(list(pids.iterdir())) < 200  # it stopped, rather than finishing the queue
    time.sleep(0.5)
    for pid in (int(p.name) for p in pids.iterdir()):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


# Writing files


def test_a_crash_before_the_rename_leaves_the_original_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "model.py"
    path.write_text("original\n", encoding="utf-8")

    def crash(*args: object) -> None:
        raise KeyboardInterrupt  # or a full disk: anything between writing and renaming

    monkeypatch.setattr(files.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, "new text\n" * 1000, "utf-8")
    assert path.read_text(encoding="utf-8") == "original\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py"]


def test_a_temporary_left_by_a_killed_run_is_removed_by_the_next_write(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_text("original\n", encoding="utf-8")
    (tmp_path / f".model.py.abc123{TEMPORARY_SUFFIX}").write_text("half a fi", encoding="utf-8")
    (tmp_path / f".other.py.abc123{TEMPORARY_SUFFIX}").write_text("another file's", encoding="utf-8")
    write_atomically(path, "fixed\n", "utf-8")
    assert path.read_text(encoding="utf-8") == "fixed\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".other.py.abc123{TEMPORARY_SUFFIX}", "model.py"]


def test_writing_through_a_symbolic_link_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.py"
    target.write_text("original\n", encoding="utf-8")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_atomically(link, "fixed\n", "utf-8")
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "fixed\n"


WRITE_LOOP = """
import sys
from pathlib import Path
from tensorlint.files import write_atomically

path = Path(sys.argv[1])
texts = ["a" * 4_000_000 + "\\n", "b" * 3_000_000 + "\\n"]
print("ready", flush=True)
for n in range(10_000):
    write_atomically(path, texts[n % 2], "utf-8")
"""

KILLS = 5


def test_kill_9_during_writes_never_leaves_a_truncated_file(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    whole = {"a" * 4_000_000 + "\n", "b" * 3_000_000 + "\n"}
    path.write_text("b" * 3_000_000 + "\n", encoding="utf-8")
    for kill in range(KILLS):
        process = subprocess.Popen(
            [sys.executable, "-c", WRITE_LOOP, str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        time.sleep(0.1 + 0.15 * kill)
        process.kill()
        process.wait()
        assert path.read_text(encoding="utf-8") in whole  # the old text or the new, never a part
    write_atomically(path, "done\n", "utf-8")  # the next run clears what the killed ones left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py"]


def test_fix_is_refused_when_its_result_would_be_too_deep(tmp_path: Path) -> None:
    from tensorlint.fixes import _parse_problem

    assert _parse_problem("x = " + "(" * 300 + ")" * 300) is not None
    assert _parse_problem(textwrap.dedent("x = (1 +\n 2)\n")) is None
