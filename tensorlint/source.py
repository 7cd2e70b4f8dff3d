"""Source text before any parsing: reading and decoding a file, and the cheap screen.

Nothing here imports LibCST: a run whose files are all cached or all screened out never
pays for it.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Collection
from pathlib import Path

# A file that names neither torch nor Lightning cannot hold what the rules look for.
_SCREEN = re.compile(r"torch|lightning")
UNUSED_NOQA_CODE = "TL900"  # the one rule that reads comments, not code: it runs on screened-out files too


def might_matter(source: str) -> bool:
    """The cheap screen, before any parsing."""
    return _SCREEN.search(source) is not None


def needs_engine(source: str, codes: Collection[str], *, apply_noqa: bool = True) -> bool:
    """Whether linting this text can report anything; when not, its findings are none."""
    if might_matter(source):
        return True
    return apply_noqa and UNUSED_NOQA_CODE in codes and "noqa" in source.lower()


def read_source(path: Path) -> str:
    """A Python file's text, decoded as Python does: BOM and PEP 263 coding cookies honoured."""
    return read_source_and_encoding(path)[0]


def read_source_and_encoding(path: Path) -> tuple[str, str]:
    """The text and the encoding to write it back in (`utf-8-sig` keeps a BOM)."""
    with path.open("rb") as handle:
        return decode_source(handle.read())


def decode_source(data: bytes) -> tuple[str, str]:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding), encoding
