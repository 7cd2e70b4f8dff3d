"""`--add-noqa`: silence every current finding with a `# noqa: CODE` comment, as ruff does.

The comment goes on the last line of the finding's statement, where a comment can never land
inside a string, and merges with a `# noqa: ...` comment already there. A file is rewritten
only when the result still parses and suppresses what it should, and it is replaced
atomically, with its encoding, BOM, line endings and permissions kept.
"""

from __future__ import annotations

import io
import re
import tokenize
import warnings
from collections.abc import Iterable
from pathlib import Path

from tensorlint.files import write_atomically
from tensorlint.findings import Edit, Finding, Location
from tensorlint.noqa import NOQA_INLINE, parse_suppressions, statement_ranges
from tensorlint.notebook import NotebookError
from tensorlint.source import NOTEBOOK_SUFFIX, read_source_and_encoding
from tensorlint.text import split_lines


class AddNoqaError(Exception):
    """A file that was left as it was; the message says why."""


def add_noqa_to_source(source: str, findings: Iterable[Finding]) -> tuple[str, int]:
    """The source with `# noqa: CODE` for each finding, and the number of comments added or extended."""
    lines = split_lines(source, keepends=True)
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
    findings = [f for f in findings if f.code is not None]
    if path.suffix == NOTEBOOK_SUFFIX:
        return _add_noqa_to_notebook(path, findings)
    source, encoding = read_source_and_encoding(path)
    new, edited = add_noqa_to_source(source, findings)
    if not edited:
        return 0
    _check_result(path, source, new, findings)
    write_atomically(path, new, encoding)
    return edited


def _add_noqa_to_notebook(path: Path, findings: list[Finding]) -> int:
    """The comments go into the cells: placed on the linted module, then copied row by row."""
    from tensorlint.notebook import read_notebook_file

    try:
        notebook, encoding = read_notebook_file(path)
    except NotebookError as error:
        raise AddNoqaError(f"{path}: {error}; left unchanged") from error
    module = notebook.module
    new, edited = add_noqa_to_source(module, findings)
    if not edited:
        return 0
    _check_result(path, module, new, findings)
    edits = [
        Edit(after, Location(row, 1), Location(row, len(before) + 1))
        for row, (before, after) in enumerate(zip(split_lines(module), split_lines(new), strict=True), start=1)
        if before != after
    ]
    if not all(notebook.accepts(edit) for edit in edits):
        raise AddNoqaError(f"{path}: cannot place a `# noqa` comment on an IPython line; left unchanged")
    write_atomically(path, notebook.edited(edits).render(), encoding)
    return edited


def _check_result(path: Path, old: str, new: str, findings: list[Finding]) -> None:
    try:
        with warnings.catch_warnings():  # the file's own warnings (invalid escapes) are not ours to print
            warnings.simplefilter("ignore")
            compile(new, str(path), "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except SyntaxError as error:
        raise AddNoqaError(f"{path}: the edited file would not parse ({error.msg}); left unchanged") from error
    suppressions = parse_suppressions(new)
    missed = [f for f in findings if f.code and not suppressions.suppresses(f.location.row, f.code)]
    if missed or len(split_lines(new, keepends=True)) != len(split_lines(old, keepends=True)):
        first = missed[0] if missed else findings[0]
        raise AddNoqaError(f"{path}:{first.location.row}: cannot place a `# noqa` comment here; left unchanged")


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
