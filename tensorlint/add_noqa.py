"""`--add-noqa`: silence every current finding with a `# noqa: CODE` comment, as ruff does.

The comment goes on the last line of the finding's statement, where a comment can never land
inside a string, and merges with a `# noqa: ...` comment already there. A file is rewritten
only when the result still parses and suppresses what it should, and it is replaced
atomically, with its encoding, BOM, line endings and permissions kept.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
import tokenize
from collections.abc import Iterable
from pathlib import Path

from tensorlint.findings import Finding
from tensorlint.noqa import NOQA_INLINE, parse_suppressions, physical_lines, statement_ranges


class AddNoqaError(Exception):
    """A file that was left as it was; the message says why."""


def add_noqa_to_source(source: str, findings: Iterable[Finding]) -> tuple[str, int]:
    """The source with `# noqa: CODE` for each finding, and the number of comments added or extended."""
    lines = physical_lines(source)
    ranges = statement_ranges(source, len(lines))
    directives = parse_suppressions(source).directives
    comments = _comments(source)
    codes_by_row: dict[int, set[str]] = {}
    for finding in findings:
        if finding.code is None:
            continue
        row = finding.location.row
        directive = next((d for d in directives if d.covers(row)), None)
        # The statement's own `# noqa` is the one that counts; else its last line.
        target = directive.row if directive else next((end for start, end in ranges if start <= row <= end), row)
        codes_by_row.setdefault(target, set()).add(finding.code)
    edited = 0
    for row, codes in sorted(codes_by_row.items()):
        if row > len(lines):
            continue
        text, ending = _split_ending(lines[row - 1])
        comment = comments.get(row)
        match = NOQA_INLINE.search(text, comment) if comment is not None else None
        if match is None and any(d.row == row for d in directives):
            continue  # the directive is inside a string: editing it would change the program
        if match is not None and not match.group("codes"):
            continue  # a blanket `# noqa` already silences everything
        if match is not None:
            written = [c for c in re.split(r"[,\s]+", match.group("codes")) if c]
            added = sorted(codes - {c.upper() for c in written})
            if not added:
                continue
            text = text[: match.start()] + f"# noqa: {', '.join([*written, *added])}" + text[match.end() :]
        else:
            text = f"{text.rstrip()}  # noqa: {', '.join(sorted(codes))}"
        lines[row - 1] = text + ending
        edited += 1
    return "".join(lines), edited


def add_noqa_to_file(path: Path, findings: Iterable[Finding]) -> int:
    """Rewrite one file in place; raises AddNoqaError, leaving the file untouched, when unsafe."""
    from tensorlint.engine import read_source  # the engine imports the rules, which import noqa

    findings = [f for f in findings if f.code is not None]
    raw = path.read_bytes()
    source = read_source(path)
    encoding = "utf-8-sig" if raw.startswith(b"\xef\xbb\xbf") else tokenize.detect_encoding(io.BytesIO(raw).readline)[0]
    new, edited = add_noqa_to_source(source, findings)
    if not edited:
        return 0
    _check_result(path, source, new, findings)
    _replace_atomically(path, new.encode(encoding))
    return edited


def _check_result(path: Path, old: str, new: str, findings: list[Finding]) -> None:
    try:
        compile(new, str(path), "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except SyntaxError as error:
        raise AddNoqaError(f"{path}: the edited file would not parse ({error.msg}); left unchanged") from error
    suppressions = parse_suppressions(new)
    missed = [f for f in findings if f.code and not suppressions.suppresses(f.location.row, f.code)]
    if missed or len(physical_lines(new)) != len(physical_lines(old)):
        first = missed[0] if missed else findings[0]
        raise AddNoqaError(f"{path}:{first.location.row}: cannot place a `# noqa` comment here; left unchanged")


def _replace_atomically(path: Path, data: bytes) -> None:
    """Write beside the file, then rename over it: a reader sees the old file or the new one."""
    mode = path.stat().st_mode
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tensorlint", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _split_ending(line: str) -> tuple[str, str]:
    stripped = line.rstrip("\r\n")
    return stripped, line[len(stripped) :]


def _comments(source: str) -> dict[int, int]:
    """Row -> the column (0-based, in characters) where a real comment starts: never inside a string."""
    found: dict[int, int] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                found[token.start[0]] = token.start[1]
    except (tokenize.TokenError, SyntaxError):
        pass
    return found
