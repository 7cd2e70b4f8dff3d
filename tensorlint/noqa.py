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


# Python ends lines at \r\n, \r or \n only; str.splitlines() also splits at \f, \x1c, \u2028...,
# which would shift every row after such a character.


@dataclass(frozen=True)
class Directive:
    """One inline `# noqa` comment: where it is and which statement rows it covers."""

    row: int  # 1-based line of the comment
    column: int  # 1-based column of its `#`
    end_column: int  # 1-based column just after the directive (the comment may go on)
    codes: tuple[str, ...]  # as written, upper-cased; empty: every code
    first_row: int  # the statement the comment belongs to
    last_row: int
    in_comment: bool = True  # False: the text is inside a string (it still suppresses, as in flake8)

    def covers(self, row: int) -> bool:
        return self.first_row <= row <= self.last_row


@dataclass(frozen=True)
class Suppressions:
    """Which codes `# noqa` comments silence on which lines."""

    file_codes: frozenset[str] | None  # None: nothing at file level; empty: everything
    lines: dict[int, frozenset[str]]  # 1-based line -> codes; empty set: every code
    directives: tuple[Directive, ...] = ()

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
    directives: list[Directive] = []
    comment_starts = _comment_starts(source) if "noqa" in source.lower() else []
    for first, last in statement_ranges(source, len(physical)):
        text = "\n".join(physical[first - 1 : last])
        if "noqa" not in text.lower():
            continue
        inline = NOQA_INLINE.search(text)
        if inline is None:
            continue
        codes = _codes(inline.group("codes"))
        for row in range(first, last + 1):
            lines[row] = codes
        before = text[: inline.start()]
        row = first + before.count("\n")
        column = inline.start() - (before.rfind("\n") + 1) + 1
        listed = tuple(c.upper() for c in re.split(r"[,\s]+", inline.group("codes") or "") if c)
        in_comment = any(start[0] == row and start[1] < column for start in comment_starts)
        directives.append(Directive(row, column, column + len(inline.group()), listed, first, last, in_comment))
    return Suppressions(file_codes, lines, tuple(directives))


def _codes(text: str | None) -> frozenset[str]:
    return frozenset(c.upper() for c in re.split(r"[,\s]+", text) if c) if text else frozenset()


def statement_ranges(source: str, line_count: int) -> list[tuple[int, int]]:
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


def _comment_starts(source: str) -> list[tuple[int, int]]:
    """(row, 0-based column) where each real comment starts."""
    starts = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                starts.append(token.start)
    except (tokenize.TokenError, SyntaxError):
        pass
    return starts
