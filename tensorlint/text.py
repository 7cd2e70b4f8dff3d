"""Lines as Python and LibCST count them: only \\n, \\r\\n and \\r end a line.

`str.splitlines()` also splits at form feeds and other separators, which would shift every
row after them.
"""

from __future__ import annotations

import re

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(source: str, *, keepends: bool = False) -> list[str]:
    lines = _LINE.findall(source)
    return lines if keepends else [line.rstrip("\r\n") for line in lines]
