"""Checking many files: the cache first, then the screen, then LibCST in worker processes.

Each file is read once here, in the parent: a cache hit or a file the screen rules out needs
nothing more, and never imports LibCST. The rest are checked by `lint_file` in a process pool
(`jobs` workers), or in this process when one job is asked for or the work is too small to
share. Results come back in the order the files were given, whichever worker finished first.

A file that raises, kills its worker or runs past its time limit is reported, and the other
files are still checked; Ctrl-C ends the workers at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tensorlint.cache import ResultCache, content_key
from tensorlint.findings import Finding, Location
from tensorlint.source import decode_source, needs_engine, read_regular_file
from tensorlint.time_limit import DEFAULT_SECONDS, TimeLimitExceeded, start_watchdog, time_limit

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

# Files go to workers in chunks of neighbours; a chunk has about 1/(_SHARES_PER_JOB * jobs) of
# the bytes still to send, so they shrink towards the end of the run, down to this many files
# and bytes: the last ones keep the workers balanced.
_SHARES_PER_JOB = 2
_FILES_PER_TASK = 8
_BYTES_PER_TASK = 64 * 1024  # ... a larger file goes alone
_GIANT_FILE_BYTES = 256 * 1024  # checked first, so that no worker is left with one at the end
_MIN_FILES_FOR_POOL = 4  # below this, starting workers costs more than it saves
# LibCST parses about a megabyte in several seconds, in native code that a signal cannot stop:
# a larger file goes to a worker even in a serial run, where the watchdog can end it.
_LARGE_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class Task:
    path: Path
    codes: frozenset[str]
    time_limit: float | None = DEFAULT_SECONDS  # seconds for this file; None: no limit


@dataclass(frozen=True)
class Checked:
    """One file's findings, or the internal error that stopped its check."""

    path: Path
    findings: tuple[Finding, ...] = ()
    error: str | None = None
    skipped: str | None = None  # a notebook in another language: not checked, and not an error
    dependencies: tuple[Path, ...] = ()  # the project modules its imports resolved to
    timed_out: bool = False  # reported as a finding, never cached: a later run may have more time


def default_jobs() -> int:
    """All the cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def check_files(tasks: Iterable[Task], *, jobs: int, cache: ResultCache | None = None) -> Iterator[Checked]:
    """Every task's result, in the order given; the cache (if any) is updated and saved."""
    done: dict[int, Checked] = {}
    pending: list[tuple[int, Task, str | None]] = []  # (position, task, content key when read)
    count = 0
    for position, task in enumerate(tasks):
        count += 1
        try:
            data = read_regular_file(task.path)
        except OSError:
            pending.append((position, task, None))  # the engine reports why it cannot be read
            continue
        key = content_key(data, task.codes)
        cached = cache.get(task.path, key, str(task.path)) if cache is not None else None
        if cached is not None:
            done[position] = Checked(task.path, tuple(cached))
        elif task.path.suffix != ".ipynb" and _screened_out(data, task.codes):  # a notebook's JSON is checked first
            done[position] = Checked(task.path)
            if cache is not None:
                cache.put(task.path, key, [])
        else:
            pending.append((position, task, key))
    work = [task for _, task, _ in pending]
    for (position, task, read_key), checked in zip(pending, _check_all(work, jobs), strict=True):
        done[position] = checked
        if cache is not None and read_key is not None and not (checked.error or checked.skipped or checked.timed_out):
            cache.put(task.path, read_key, list(checked.findings), checked.dependencies)
    if cache is not None:
        cache.save()
    for position in range(count):
        yield done[position]


def _screened_out(data: bytes, codes: frozenset[str]) -> bool:
    """The engine's own screen, applied before LibCST is imported; undecodable files go to the engine."""
    try:
        source, _ = decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return False
    return not needs_engine(source, codes)


def _check_all(tasks: list[Task], jobs: int) -> list[Checked]:
    if jobs <= 1 or len(tasks) < _MIN_FILES_FOR_POOL:
        return [_check_isolated(task) if _large(task) else check_one(task) for task in tasks]
    # Here, not at the top: a run with nothing to share among workers never imports them.
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    import tensorlint.engine  # noqa: F401  # imported once here, so that forked workers start with it

    chunks = _chunks(tasks, jobs)
    results: list[list[Checked] | None] = [None] * len(chunks)
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(chunks)), initializer=_worker_started)
    try:
        futures: list[Future[list[Checked]]] = [pool.submit(_check_chunk, chunk) for chunk in chunks]
        for index, future in enumerate(futures):
            # A worker that died (a crash, not an exception) leaves its chunk to be retried below.
            with contextlib.suppress(BrokenProcessPool):
                results[index] = future.result()
    except BaseException:  # Ctrl-C: stop now, without waiting for the files still queued
        _stop(pool)
        raise
    pool.shutdown()
    for index, chunk in enumerate(chunks):
        if results[index] is None:
            results[index] = [_check_isolated(task) for task in chunk]
    by_path = {checked.path: checked for chunk_results in results if chunk_results for checked in chunk_results}
    return [by_path[task.path] for task in tasks]


def _chunks(tasks: list[Task], jobs: int) -> list[list[Task]]:
    """Giant files first, largest first: no worker is left with one at the end. Then the rest in
    path order, neighbours together: files of one package import the same modules, which a
    worker analyses once and keeps, so long runs of neighbours make each worker analyse fewer
    of them (0.92 of the time on lightning and timm, against chunks of 8 files handed out in
    turn; in size order, a worker analysed a third more modules). The chunks shrink as the run
    goes on (guided scheduling), and the last are small, so that the workers finish together."""
    sizes = {task.path: _size(task) for task in tasks}
    giants = sorted((t for t in tasks if sizes[t.path] >= _GIANT_FILE_BYTES), key=lambda t: sizes[t.path], reverse=True)
    rest = sorted((t for t in tasks if sizes[t.path] < _GIANT_FILE_BYTES), key=lambda t: t.path)
    left = sum(sizes[task.path] for task in rest)
    neighbours: list[list[Task]] = []
    budget = goal = 0
    for task in rest:
        size = sizes[task.path]
        smallest = goal == _BYTES_PER_TASK
        if not neighbours or budget + size > goal or (smallest and len(neighbours[-1]) == _FILES_PER_TASK):
            neighbours.append([])
            goal = max(left // (_SHARES_PER_JOB * jobs), _BYTES_PER_TASK)
            budget = 0
        neighbours[-1].append(task)
        budget += size
        left -= size
    return [[giant] for giant in giants] + neighbours


def _size(task: Task) -> int:
    try:
        return task.path.stat().st_size
    except OSError:
        return 0


def _large(task: Task) -> bool:
    try:
        return bool(task.time_limit) and task.path.stat().st_size > _LARGE_FILE_BYTES
    except OSError:
        return False


def _worker_started() -> None:
    """Ctrl-C is the parent's to handle (it ends the workers); the watchdog ends a worker stuck in native code."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    start_watchdog()


def _stop(pool: ProcessPoolExecutor) -> None:
    # The executor has no public way to end busy workers before Python 3.14's terminate_workers().
    workers = list((getattr(pool, "_processes", None) or {}).values())
    for process in workers:
        with contextlib.suppress(OSError):
            process.terminate()
    # Waited for: the executor's thread, seeing its workers gone, closes its wake-up pipe now;
    # left running, it may close it while the interpreter's exit writes to it (seen on Python
    # 3.11, under load), and an "OSError: Bad file descriptor" follows the "interrupted" line.
    pool.shutdown(wait=True, cancel_futures=True)


def _check_chunk(chunk: list[Task]) -> list[Checked]:
    return [check_one(task) for task in chunk]


def _timed_out(task: Task, reason: str) -> Checked:
    where = Location(1, 1)
    return Checked(task.path, (Finding(None, f"not checked: {reason}", str(task.path), where, where),), timed_out=True)


def check_one(task: Task) -> Checked:
    """One file through the engine; an exception in it is that file's error, not the run's."""
    from tensorlint.engine import lint_file_and_dependencies
    from tensorlint.notebook import NotPythonNotebook

    try:
        with time_limit(task.time_limit):
            findings, dependencies = lint_file_and_dependencies(task.path, codes=task.codes)
        return Checked(task.path, tuple(findings), dependencies=tuple(dependencies))
    except TimeLimitExceeded as error:
        return _timed_out(task, str(error))
    except NotPythonNotebook as error:
        return Checked(task.path, skipped=str(error))
    except Exception as error:
        return Checked(task.path, error=f"{type(error).__name__}: {error}")


def _check_isolated(task: Task) -> Checked:
    """After a worker died: each file of its chunk alone in a fresh worker, to find the one that kills it."""
    from concurrent.futures import ProcessPoolExecutor  # here: see _check_all
    from concurrent.futures.process import BrokenProcessPool

    started = time.monotonic()
    with ProcessPoolExecutor(max_workers=1, initializer=_worker_started) as pool:
        try:
            return pool.submit(check_one, task).result()
        except BrokenProcessPool:
            if task.time_limit and time.monotonic() - started >= 2 * task.time_limit:
                return _timed_out(task, f"{TimeLimitExceeded(task.time_limit)}; stopped in native code")
            return Checked(task.path, error="the worker process checking this file died")
