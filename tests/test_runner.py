"""Many files at once: workers give what one process gives, and the cache gives what the engine gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tensorlint
import tensorlint.engine
from helpers import FIXTURES, ROOT, forked_workers, run_tensorlint
from samples import LEAKY, write_leaky_files
from tensorlint import cache, runner
from tensorlint.cache import ResultCache, build_fingerprint
from tensorlint.engine import lint_file
from tensorlint.findings import Finding
from tensorlint.rules import default_codes
from tensorlint.runner import Task, check_files

CODES = frozenset(default_codes())
# Files that hold findings and fixes: four positives of each rule, the fix pairs, the verifier's
# cases. What a file gives is what can go wrong in workers or the cache, not how many files there are.
FIXTURE_FILES = sorted(
    [
        *(path for folder in sorted(FIXTURES.glob("TL*")) for path in sorted(folder.glob("pos_*.py"))[:4]),
        *FIXTURES.glob("fixes/*.py"),
        *FIXTURES.glob("runtime/*.py"),
    ]
)
FIXTURE_ARGS = [str(path.relative_to(ROOT)) for path in FIXTURE_FILES]


def _cli_json(*args: str, cwd: Path = ROOT) -> list[dict[str, object]]:
    result = run_tensorlint("--output-format", "json", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    records: list[dict[str, object]] = json.loads(result.stdout)
    return records


def _with_fixes(findings: list[Finding]) -> list[tuple[Finding, object]]:
    return [(finding, finding.fix) for finding in findings]  # a Finding's equality leaves its fix out


def test_parallel_findings_equal_serial_findings_in_the_same_order() -> None:
    serial = _cli_json("-j", "1", "--no-cache", *FIXTURE_ARGS, "examples")
    parallel = _cli_json("-j", "2", "--no-cache", *FIXTURE_ARGS, "examples")
    assert serial and parallel == serial


def test_check_files_keeps_the_order_given() -> None:
    tasks = [Task(path, CODES) for path in reversed(FIXTURE_FILES)]
    assert [checked.path for checked in check_files(tasks, jobs=2)] == [task.path for task in tasks]


def test_cached_findings_equal_fresh_ones_fixes_included(tmp_path: Path) -> None:
    tasks = [Task(path, CODES) for path in FIXTURE_FILES]
    fresh = [_with_fixes(lint_file(path, codes=CODES)) for path in FIXTURE_FILES]
    list(check_files(tasks, jobs=1, cache=ResultCache(tmp_path)))
    cached = [_with_fixes(list(c.findings)) for c in check_files(tasks, jobs=1, cache=ResultCache(tmp_path))]
    assert cached == fresh
    assert any(fix is not None for findings in fresh for _, fix in findings)


def _engine_calls(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    calls: list[Path] = []
    real = runner.check_one

    def counting(task: Task) -> runner.Checked:
        calls.append(task.path)
        return real(task)

    monkeypatch.setattr(runner, "check_one", counting)
    return calls


def test_a_hit_skips_the_engine_and_a_change_misses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "train.py"
    source.write_text(LEAKY, encoding="utf-8")
    calls = _engine_calls(monkeypatch)
    cache_dir = tmp_path / "cache"

    def run(codes: frozenset[str] = CODES) -> list[Finding]:
        [checked] = check_files([Task(source, codes)], jobs=1, cache=ResultCache(cache_dir))
        return list(checked.findings)

    first = run()
    assert [f.code for f in first] == ["TL004"] and calls == [source]
    assert run() == first and calls == [source]  # unchanged: from the cache
    source.write_text(LEAKY.replace("total = 0.0", "total = 0"), encoding="utf-8")
    assert run() == first and len(calls) == 2  # content changed: checked again
    assert run(frozenset({"TL001"})) == [] and len(calls) == 3  # other codes selected: checked again
    monkeypatch.setattr(tensorlint, "__version__", "99.0")
    assert run() == first and len(calls) == 4  # another build of tensorlint: checked again


def test_files_the_screen_rules_out_never_reach_the_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain.py"
    plain.write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    calls = _engine_calls(monkeypatch)
    assert [c.findings for c in check_files([Task(plain, CODES)], jobs=1)] == [()]
    assert calls == []


def test_another_libcst_release_is_another_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    assert metadata.version("libcst") in cache._libcst_release()  # read from its _version.py
    before = build_fingerprint()
    monkeypatch.setattr(cache, "_libcst_release", lambda: "__version__ = version = '99.0'")
    assert build_fingerprint() != before


def test_a_fully_cached_run_never_imports_libcst(tmp_path: Path) -> None:
    env = {**os.environ, "TENSORLINT_CACHE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "tensorlint", "--exit-zero", "-q", "fixtures/TL004", "examples"]
    subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=True)
    probe = (
        "import sys; from tensorlint.cli import main; main(['--exit-zero', '-q', 'fixtures/TL004', 'examples']); "
        "sys.stderr.write(str(sorted(m for m in sys.modules if m.split('.')[0] == 'libcst')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert result.stderr.endswith("[]"), result.stderr[-500:]
    assert "TL004" in result.stdout  # the findings came from the cache


# What a plain check needs none of: LibCST, the parts of other commands and options, notebooks,
# pathspec (a .gitignore), importlib.metadata, and the workers' machinery.
_NOT_FOR_A_SCREENED_OUT_FILE = (
    "libcst",
    "tensorlint.engine",
    "tensorlint.fixing",
    "tensorlint.add_noqa",
    "tensorlint.notebook",
    "tensorlint.docs",
    "pathspec",
    "importlib.metadata",
    "concurrent.futures.process",
)


def test_a_cold_run_of_a_screened_out_file_imports_nothing_it_does_not_need(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # a git work tree without a .gitignore
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "plain.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    probe = (
        "import sys; before = set(sys.modules); from tensorlint.cli import main; "
        "code = main(['--no-cache', '-q', 'pkg']); "
        "new = [m for m in set(sys.modules) - before if any(m == n or m.startswith(n + '.') for n in sys.argv[1:])]; "
        "sys.stderr.write(f'{code} {sorted(new)}')"
    )
    command = [sys.executable, "-c", probe, *_NOT_FOR_A_SCREENED_OUT_FILE]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert result.stderr.endswith("0 []"), result.stderr[-500:]


@forked_workers
def test_an_exception_in_a_worker_is_that_files_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = write_leaky_files(tmp_path, 12)
    real = tensorlint.engine.lint_file

    def failing(path: Path, **options: object) -> list[Finding]:
        if path == paths[5]:
            raise RuntimeError("rule bug")
        return real(path, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(tensorlint.engine, "lint_file", failing)
    results = list(check_files([Task(p, CODES) for p in paths], jobs=2))
    assert [c.error for c in results] == [None] * 5 + ["RuntimeError: rule bug"] + [None] * 6
    assert all(c.findings for i, c in enumerate(results) if i != 5)


@forked_workers
def test_a_worker_that_dies_fails_only_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = write_leaky_files(tmp_path, 10)
    real = tensorlint.engine.lint_file

    def dying(path: Path, **options: object) -> list[Finding]:
        if path == paths[3]:
            os._exit(1)  # a crash in native code looks like this to the pool
        return real(path, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(tensorlint.engine, "lint_file", dying)
    results = list(check_files([Task(p, CODES) for p in paths], jobs=2))
    assert [c.error is not None for c in results] == [i == 3 for i in range(10)]
    assert all(c.findings for i, c in enumerate(results) if i != 3)


@pytest.mark.parametrize("value", ["-1", "many"])
def test_jobs_must_be_a_count(value: str) -> None:
    assert run_tensorlint("-j", value, "fixtures").returncode == 2


def test_giant_files_go_first_alone_and_the_rest_in_path_order(tmp_path: Path) -> None:
    # Neighbours together (they import the same modules, which a worker keeps analysed); giant
    # files first, so that none is left for the end.
    sizes = {"b/z.py": 10, "a/y.py": 300 * 1024, "a/x.py": 10, "b/w.py": 70 * 1024, "c/v.py": 400 * 1024}
    for name, size in sizes.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("#" * size)
    for index in range(9):
        (tmp_path / "d" / f"{index}.py").parent.mkdir(exist_ok=True)
        (tmp_path / "d" / f"{index}.py").write_text("import torch\n")
    tasks = [Task(path, frozenset()) for path in sorted(tmp_path.rglob("*.py"), reverse=True)]
    chunks = [[task.path.relative_to(tmp_path).as_posix() for task in chunk] for chunk in runner._chunks(tasks, 2)]
    assert chunks[:2] == [["c/v.py"], ["a/y.py"]]
    assert [name for chunk in chunks[2:] for name in chunk] == sorted(
        ["a/x.py", "b/w.py", "b/z.py", *(f"d/{index}.py" for index in range(9))]
    )
    assert ["b/w.py"] in chunks  # over 64 KiB: alone
    assert all(len(chunk) <= 8 for chunk in chunks)  # small files, at the smallest chunk size


def test_chunks_shrink_so_that_workers_finish_together(tmp_path: Path) -> None:
    # Guided scheduling: each chunk has a share of the bytes still to send, the first ones large
    # (fewer imported modules analysed twice), the last at the smallest size.
    for index in range(200):
        (tmp_path / f"m{index:03}.py").write_text("#" * 10_000)
    tasks = [Task(path, frozenset()) for path in sorted(tmp_path.glob("*.py"))]
    chunks = runner._chunks(tasks, 2)
    lengths = [len(chunk) for chunk in chunks]
    assert [task for chunk in chunks for task in chunk] == tasks
    assert lengths[0] == 50  # a quarter of the bytes: two shares for each of the two workers
    assert lengths == sorted(lengths, reverse=True)
    assert lengths[-1] <= 8
