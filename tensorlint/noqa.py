"""`# noqa` suppression, with flake8's syntax and its reach over multi-line statements."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

from tensorlint.text import split_lines

# flake8's inline regex (flake8/defaults.py), so that both front-ends agree.
_CODES = r"(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)"
NOQA_INLINE = re.compile(rf"#\s*noqa(?::[\s]?{_CODES})?", re.IGNORECASE)
NOQA_FILE = re.compile(rf"^\s*#\s*(?:flake8|tensorlint)[:=]\s*noqa(?::\s?{_CODES})?\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Suppressions:
    """Which codes `# noqa` comments silence on which lines."""

    file_codes: frozenset[str] | None  # None: nothing at file level; empty: everything
    lines: dict[int, frozenset[str]]  # 1-based line -> codes; empty set: every code

    def suppresses(self, row: int, code: str) -> bool:
        if self.file_codes is not None and (not self.file_codes or code in self.file_codes):
            return True
        codes = self.lines.get(row)
        return codes is not None and (not codes or code in codes)


def parse_suppressions(source: str) -> Suppressions:
    file_codes: frozenset[str] | None = None
    for match in NOQA_FILE.finditer(source):
        codes = _codes(match.group("codes"))
        file_codes = codes if file_codes is None or codes else frozenset()
    physical = split_lines(source)
    lines: dict[int, frozenset[str]] = {}
    for first, last in _statement_ranges(source, len(physical)):
        text = "\n".join(physical[first - 1 : last])
        if "noqa" not in text.lower():
            continue
        inline = NOQA_INLINE.search(text)
        if inline is None:
            continue
        codes = _codes(inline.group("codes"))
        for row in range(first, last + 1):
            lines[row] = codes
    return Suppressions(file_codes, lines)


def add_noqa(line: str, code: str) -> str:
    """The line with `code` suppressed: merged into its `# noqa: ...` comment, or one appended."""
    match = NOQA_INLINE.search(line)
    if match is None:
        body = line.rstrip("\r\n")
        return f"{body.rstrip()}  # noqa: {code}{line[len(body) :]}"
    codes = _codes(match.group("codes"))
    if not codes or code in codes:
        return line  # a blanket noqa, or the code is there already
    merged = ", ".join(sorted(codes | {code}))
    return f"{line[: match.start()]}# noqa: {merged}{line[match.end() :]}"


def _codes(text: str | None) -> frozenset[str]:
    return frozenset(c.upper() for c in re.split(r"[,\s]+", text) if c) if text else frozenset()


def _statement_ranges(source: str, line_count: int) -> list[tuple[int, int]]:
    """Line ranges that share a noqa comment: each multi-line statement, as flake8 does."""
    ranges: list[tuple[int, int]] = []
    covered = 0
    try:
        start: int | None = None
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.NL, tokenize.COMMENT) and start is None:
                continue
            if start is None:
                start = token.start[0]
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                end = max(token.start[0], start)
                ranges.append((start, end))
                covered = end
                start = None
    except (tokenize.TokenError, SyntaxError):
        pass
    ranges.extend((row, row) for row in range(covered + 1, line_count + 1))
    return ranges
