"""An exception in one line for a verdict: its type, the first line of its message, where it was raised.

A DataLoader worker's exception reaches the main process as a new exception whose message holds
the worker's whole traceback as text (torch's `ExceptionWrapper`); that text is read back into
the same three parts instead of being printed inside the verdict. No torch here.
"""

from __future__ import annotations

import re
import traceback

_WORKER = re.compile(r"^Caught (?P<type>\w+) in (?P<who>DataLoader worker process \d+)\.", re.MULTILINE)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)', re.MULTILINE)
_RAISED = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt)\w*): (?P<message>.*)$")


def summarise(error: BaseException, skip: tuple[str, ...] = ()) -> str:
    """`RuntimeError: message (file.py:12 in f)`; for a worker's error `DataLoader worker process 0 raised ...`.

    `skip`: folders whose frames are not where the user's code failed (torch, tensorlint)."""
    text = str(error)
    worker = _WORKER.search(text)
    if worker is not None:
        return f"{worker['who']} raised {_from_text(text, worker['type'], skip)}"
    frames = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(error.__traceback__)]
    return f"{type(error).__name__}{_message(text)}{_where(frames, skip)}"


def _from_text(text: str, name: str, skip: tuple[str, ...]) -> str:
    """The last `Type: message` line of a traceback printed as text, and its last user frame."""
    lines = text.splitlines()
    raised = [m for m in (_RAISED.match(line) for line in lines) if m is not None]
    message = raised[-1]["message"] if raised else ""
    if raised:
        name = raised[-1]["type"].rsplit(".", 1)[-1]
    frames = [(m["file"], int(m["line"]), m["function"]) for m in _FRAME.finditer(text)]
    return f"{name}{_message(message)}{_where(frames, skip)}"


def _message(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    prefix = re.match(r"^[A-Za-z_]\w*(?:Error|Exception): ", first)  # "RuntimeError: RuntimeError: ..." once
    if prefix is not None:
        first = first[prefix.end() :]
    if len(first) > 300:
        first = first[:297] + "..."
    return f": {first}" if first else ""


def _where(frames: list[tuple[str, int, str]], skip: tuple[str, ...]) -> str:
    mine = [f for f in frames if not f[0].startswith(skip) and not f[0].startswith("<")] or frames
    if not mine:
        return ""
    file, line, function = mine[-1]
    name = file.replace("\\", "/").rsplit("/", 1)[-1]
    return f" ({name}:{line} in {function})"
