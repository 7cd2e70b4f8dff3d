"""A time limit per file, so that one pathological file cannot hang a run.

Two layers. The soft limit is a timer signal that raises `TimeLimitExceeded` in the main
thread: it stops Python code (the analysis, the rules) and the file is reported. Native code
(LibCST's parser) only sees that signal when it returns, so a worker process also has a hard
limit at twice the soft one: a CPU-time timer whose signal ends the process without needing
the GIL (which the parser may hold for seconds), and a watchdog thread for a worker that waits
instead of working. The runner then reports that file, and checks the rest of its chunk again
in fresh workers.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

DEFAULT_SECONDS = 60.0
WATCHDOG_EXIT = 70  # the status a worker ends with when the watchdog stops it


class TimeLimitExceeded(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"took longer than the time limit of {seconds:g} s per file (--timeout)")
        self.seconds = seconds


_current: tuple[float, float] | None = None  # (started, limit) of the file this process is checking
_hard_limit = False  # set in worker processes, which may be ended


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise TimeLimitExceeded in the block after `seconds` (None or 0: no limit)."""
    global _current
    usable = bool(seconds) and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not seconds or not usable:
        yield
        return

    def expire(_signal: int, _frame: FrameType | None) -> None:
        raise TimeLimitExceeded(seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    if _hard_limit:
        signal.setitimer(signal.ITIMER_PROF, 2 * seconds)  # SIGPROF's default action ends the process
    _current = (time.monotonic(), seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if _hard_limit:
            signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGALRM, previous)
        _current = None


def start_watchdog() -> None:
    """In a worker process: end the process when a file runs past twice its limit (stuck in native code)."""
    global _hard_limit
    if hasattr(signal, "setitimer"):
        signal.signal(signal.SIGPROF, signal.SIG_DFL)
        _hard_limit = True
    threading.Thread(target=_watch, name="tensorlint-watchdog", daemon=True).start()


def _watch() -> None:
    while True:
        current = _current
        if current is not None:
            started, limit = current
            if time.monotonic() - started > 2 * limit:
                os._exit(WATCHDOG_EXIT)
        time.sleep(0.1)
