"""Lines as Python and LibCST count them: only \\n, \\r\\n and \\r end a line.

`str.splitlines()` also splits at form feeds and other separators, which would shift every
row after them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tensorlint.findings import Edit

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(source: str, *, keepends: bool = False) -> list[str]:
    lines = _LINE.findall(source)
    return lines if keepends else [line.rstrip("\r\n") for line in lines]


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits; rows and columns are 1-based, columns in characters."""
    lines = split_lines(source, keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(row: int, column: int) -> int:
        return starts[row - 1] + column - 1 if row - 1 < len(starts) else len(source)

    for edit in sorted(edits, key=lambda e: e.location, reverse=True):
        begin = offset(edit.location.row, edit.location.column)
        end = offset(edit.end_location.row, edit.end_location.column)
        source = source[:begin] + edit.content + source[end:]
    return source
