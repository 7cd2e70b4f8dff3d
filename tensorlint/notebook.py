"""Jupyter notebooks: their code cells as one module, positions mapped back, sources written back.

The code cells are linted as one module, in cell order, since a cell's names are visible to the
cells after it. IPython syntax (magics, shell escapes, help) is masked line by line with Python
of the same shape, so that every row of the module is a row of a cell. Writing back splices each
changed cell's new `source` into the file's text, so that outputs, metadata, key order and
formatting stay byte-identical.
"""

from __future__ import annotations

import bisect
import codecs
import dataclasses
import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tensorlint.findings import CellLocation, Edit, Finding, Location
from tensorlint.source import read_regular_file
from tensorlint.text import apply_edits, split_lines

# Cell magics whose body is Python run in the kernel's namespace; any other `%%` cell is not Python.
PYTHON_CELL_MAGICS = frozenset({"capture", "debug", "prun", "time", "timeit"})

# `files = !ls`, `t = %timeit -o f()`: the target keeps its binding, the value becomes unknown.
_ASSIGNED_MAGIC = re.compile(r"(?P<indent>\s*)(?P<target>[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=\s*[!%]")
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class NotebookError(Exception):
    """A notebook that cannot be linted; the message says why."""


class NotPythonNotebook(NotebookError):
    """A notebook in another language (R, Julia...): skipped, not an error."""


@dataclass(frozen=True)
class CodeCell:
    number: int  # 1-based position among all cells, markdown included: what ruff reports
    source: str  # the cell's text, as the user wrote it (after edits, as edited)
    python: str  # the same rows with IPython syntax masked: what the rules read
    masked_rows: frozenset[int]  # 1-based rows of the cell that `python` replaced
    first_row: int  # the module row of the cell's first line
    written: str  # the source as it is in the file, to tell whether an edit changed it
    span: tuple[int, int]  # where the `source` value lies in the file's text
    pieces: tuple[tuple[int, str], ...]  # each JSON string of `source`: where it starts, its text
    indent: int = 0  # the leading indentation every line shared, removed from `python` as IPython does

    @property
    def row_count(self) -> int:
        return len(split_lines(self.source))


@dataclass(frozen=True)
class Notebook:
    text: str  # the file's JSON text
    cells: tuple[CodeCell, ...]  # the Python code cells, in order
    ensure_ascii: bool  # whether the file escapes non-ASCII text (nbformat does not)

    @property
    def module(self) -> str:
        """What the rules lint: the masked code cells, one after the other."""
        return "".join(_terminated(cell.python) for cell in self.cells)

    @property
    def display_source(self) -> str:
        """The cells as written, row for row like `module`: what people are shown."""
        return "".join(_terminated(cell.source) for cell in self.cells)

    def cell_at(self, row: int) -> CodeCell | None:
        """The cell that holds a module row (the last cell for a row past the end)."""
        index = bisect.bisect_right([cell.first_row for cell in self._cells_with_rows], row) - 1
        return self._cells_with_rows[index] if index >= 0 else None

    @functools.cached_property
    def _cells_with_rows(self) -> tuple[CodeCell, ...]:
        return tuple(cell for cell in self.cells if cell.row_count)  # an empty cell holds no row

    def locate(self, finding: Finding) -> Finding:
        """The finding with its place in the cell and in the file's text."""
        cell = self.cell_at(finding.location.row)
        if cell is None:
            return finding
        start = _in_cell(finding.location, cell)
        end = _in_cell(finding.end_location, cell)
        where = CellLocation(cell.number, start, end, self._file_location(cell, start), self._file_location(cell, end))
        return dataclasses.replace(finding, cell=where)

    def accepts(self, edit: Edit) -> bool:
        """Whether an edit stays inside one cell and off the rows that IPython syntax was masked on."""
        cell = self.cell_at(edit.location.row)
        if cell is None or cell.indent:  # a dedented cell's columns are not the module's
            return False
        after = cell.first_row + cell.row_count
        end = edit.end_location
        if end.row > after or (end.row == after and end.column > 1):
            return False
        touched = range(edit.location.row - cell.first_row + 1, end.row - cell.first_row + 2)
        return not any(row in cell.masked_rows for row in touched)

    def edited(self, edits: Sequence[Edit]) -> Notebook:
        """The notebook with edits (module positions, each accepted) applied to its cells."""
        by_cell: dict[int, list[Edit]] = {}
        for edit in edits:
            cell = self.cell_at(edit.location.row)
            assert cell is not None and self.accepts(edit)
            shift = cell.first_row - 1
            local = Edit(edit.content, _shifted(edit.location, shift), _shifted(edit.end_location, shift))
            by_cell.setdefault(cell.number, []).append(local)
        cells = []
        row = 1
        for cell in self.cells:
            source = cell.source
            if cell.number in by_cell:
                source = apply_edits(source, by_cell[cell.number])
                if not _ends_line(cell.source) and source.endswith("\n"):
                    source = source[:-1]  # the module's newline after a cell's last line is not the cell's
            python, masked = mask_ipython(source)
            python, indent = dedent_cell(python)
            cells.append(
                dataclasses.replace(
                    cell, source=source, python=python, masked_rows=masked, first_row=row, indent=indent
                )
            )
            row += len(split_lines(source))
        return dataclasses.replace(self, cells=tuple(cells))

    def changed_cells(self) -> list[CodeCell]:
        return [cell for cell in self.cells if cell.source != cell.written]

    def render(self) -> str:
        """The file's text with each changed cell's `source` rewritten in the file's own layout."""
        text = self.text
        for cell in sorted(self.changed_cells(), key=lambda c: c.span, reverse=True):
            start, end = cell.span
            text = text[:start] + self._encode(cell, text[start:end]) + text[end:]
        return text

    def _encode(self, cell: CodeCell, written: str) -> str:
        if not written.startswith("["):
            return json.dumps(cell.source, ensure_ascii=self.ensure_ascii)
        items = [json.dumps(line, ensure_ascii=self.ensure_ascii) for line in split_lines(cell.source, keepends=True)]
        inside = written[1:-1]
        after_bracket = inside[: len(inside) - len(inside.lstrip(" \t\n\r"))]
        before_bracket = inside[len(inside.rstrip(" \t\n\r")) :]
        if "\n" in after_bracket:  # nbformat's layout: one line per item, indented as the file is
            return "[" + after_bracket + ("," + after_bracket).join(items) + before_bracket + "]"
        separator = "," if re.search(r'",\S', written) else ", "
        return "[" + separator.join(items) + "]"

    @functools.cached_property
    def _line_starts(self) -> list[int]:
        starts = [0]
        for line in split_lines(self.text, keepends=True):
            starts.append(starts[-1] + len(line))
        return starts

    def _file_location(self, cell: CodeCell, location: Location) -> Location:
        """Where a place in a cell lies in the file's JSON text, escapes counted."""
        lines = split_lines(cell.source, keepends=True)
        index = sum(len(line) for line in lines[: location.row - 1]) + location.column - 1
        index = max(0, min(index, len(cell.source)))
        offset = cell.span[0]
        for number, (start, piece) in enumerate(cell.pieces):
            # The start of a line is the start of the next string, not the end of the one before.
            if index < len(piece) or number == len(cell.pieces) - 1:
                offset = _offset_in_literal(self.text, start, min(index, len(piece)))
                break
            index -= len(piece)
        row = bisect.bisect_right(self._line_starts, offset)
        return Location(row, offset - self._line_starts[row - 1] + 1)


def read_notebook(text: str) -> Notebook:
    """Parse a notebook's JSON text; raises NotebookError (NotPythonNotebook for other languages)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})") from error
    if not isinstance(data, dict):
        raise NotebookError("not a notebook: the JSON is not an object")
    cells = data.get("cells")
    if not isinstance(cells, list):
        if "worksheets" in data:
            raise NotebookError(
                "nbformat 3 notebooks are not supported; convert with `jupyter nbconvert --to notebook`"
            )
        raise NotebookError("not a notebook: no `cells` list")
    language = _language(data.get("metadata"))
    if language is not None:
        raise NotPythonNotebook(f"the kernel's language is {language}, not Python")
    literals = _source_literals(text)
    code_cells = []
    row = 1
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            raise NotebookError(f"cell {index + 1} is not a JSON object")
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source")
        if isinstance(source, list) and all(isinstance(piece, str) for piece in source):
            texts: list[str] = source
        elif isinstance(source, str):
            texts = [source]
        else:
            raise NotebookError(f"cell {index + 1}: `source` must be a string or a list of strings")
        if index not in literals:  # json.loads and the walk disagree: only duplicate keys can do that
            raise NotebookError(f"cell {index + 1}: cannot find its `source` in the file")
        span, starts = literals[index]
        joined = "".join(texts)
        python, masked = mask_ipython(joined)
        python, indent = dedent_cell(python)
        pieces = tuple(zip(starts, texts, strict=True))
        code_cells.append(CodeCell(index + 1, joined, python, masked, row, joined, span, pieces, indent))
        row += len(split_lines(joined))
    return Notebook(text, tuple(code_cells), _escapes_non_ascii(text))


def _language(metadata: object) -> str | None:
    """The kernel's language when the metadata names one other than Python; None for Python or unknown."""
    if not isinstance(metadata, dict):
        return None
    for table, key in (("language_info", "name"), ("kernelspec", "language")):
        section = metadata.get(table)
        name = section.get(key) if isinstance(section, dict) else None
        if isinstance(name, str) and name.strip():
            return None if name.strip().lower() in ("python", "python3", "ipython", "ipython3") else name.strip()
    return None


def _escapes_non_ascii(text: str) -> bool:
    """Written with json's `ensure_ascii`: no raw non-ASCII character, and `\\u` escapes of some."""
    if any(ord(c) > 127 for c in text):
        return False
    return any(int(code, 16) > 127 for code in re.findall(r"(?<!\\)\\u([0-9a-fA-F]{4})", text))


# The JSON walk below finds where each cell's `source` lies in the text, which json.loads does
# not tell. It runs on text that json.loads has accepted, so it does not validate.


def _source_literals(text: str) -> dict[int, tuple[tuple[int, int], list[int]]]:
    """For each cell index: the span of its `source` value and where each of its strings starts."""
    found: dict[int, tuple[tuple[int, int], list[int]]] = {}

    def in_cell(index: int) -> Callable[[str, int], int]:
        def member(key: str, at: int) -> int:
            end = _skip_value(text, at)
            if key == "source":
                starts = [at] if text[at] == '"' else _item_starts(text, at) if text[at] == "[" else []
                found[index] = ((at, end), starts)
            return end

        return member

    def cell(index: int, at: int) -> int:
        return _walk_object(text, at, in_cell(index)) if text[at] == "{" else _skip_value(text, at)

    def top(key: str, at: int) -> int:
        return _walk_array(text, at, cell) if key == "cells" and text[at] == "[" else _skip_value(text, at)

    _walk_object(text, _skip_space(text, 0), top)
    return found


def _skip_space(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _skip_value(text: str, at: int) -> int:
    return _DECODER.raw_decode(text, at)[1]


def _walk_object(text: str, at: int, member: Callable[[str, int], int]) -> int:
    """Walk the object at `at`; `member(key, value_start)` returns where the value ends."""
    at = _skip_space(text, at + 1)
    while text[at] != "}":
        key, at = _DECODER.raw_decode(text, at)
        at = _skip_space(text, _skip_space(text, at) + 1)  # past the colon
        at = _skip_space(text, member(key, at))
        if text[at] == ",":
            at = _skip_space(text, at + 1)
    return at + 1


def _walk_array(text: str, at: int, item: Callable[[int, int], int]) -> int:
    at = _skip_space(text, at + 1)
    index = 0
    while text[at] != "]":
        at = _skip_space(text, item(index, at))
        index += 1
        if text[at] == ",":
            at = _skip_space(text, at + 1)
    return at + 1


def _item_starts(text: str, at: int) -> list[int]:
    starts: list[int] = []

    def item(_index: int, start: int) -> int:
        starts.append(start)
        return _skip_value(text, start)

    _walk_array(text, at, item)
    return starts


def _offset_in_literal(text: str, literal_start: int, index: int) -> int:
    """The offset in `text` of the `index`th character of the JSON string starting at `literal_start`."""
    at = literal_start + 1
    for _ in range(index):
        if text[at] != "\\":
            at += 1
        elif text[at + 1] != "u":
            at += 2
        else:  # a surrogate pair written as two escapes is one character
            high = 0xD800 <= int(text[at + 2 : at + 6], 16) < 0xDC00
            at += 12 if high and text.startswith("\\u", at + 6) else 6
    return at


def mask_ipython(source: str) -> tuple[str, frozenset[int]]:
    """The cell's text with IPython syntax replaced by Python of the same rows, and those rows.

    A magic or shell line becomes `pass` at its indentation (it may be a block's only
    statement); `x = !cmd` becomes `x = ...`; a cell magic other than the timing and capture
    ones makes the whole cell blank, since its body is not Python (`%%bash`, `%%writefile`).
    """
    lines = split_lines(source, keepends=True)
    first = next((line.strip() for line in lines if line.strip()), "")
    magic = first[2:].split(maxsplit=1) if first.startswith("%%") else None
    if magic is not None and (not magic or magic[0] not in PYTHON_CELL_MAGICS):
        return "".join(_ending(line) or "\n" for line in lines), frozenset(range(1, len(lines) + 1))
    state = _Scan()
    masked: set[int] = set()
    output = []
    continued_magic = False
    for row, line in enumerate(lines, start=1):
        body, ending = line[: len(line) - len(_ending(line))], _ending(line)
        replacement = None
        if continued_magic:
            replacement = ""  # a magic's continuation line: blank
        elif state.at_statement_start:
            replacement = _python_for(body, state)
        if replacement is None:
            state = state.after(body)
            output.append(line)
            continue
        masked.add(row)
        output.append(replacement + (ending or "\n"))  # a blank last line without an ending is still a row
        continued_magic = body.rstrip().endswith("\\")
    return "".join(output), frozenset(masked)


def _python_for(body: str, state: _Scan) -> str | None:
    """Python of the same shape for an IPython line; None for a Python line."""
    stripped = body.lstrip()
    indent = body[: len(body) - len(stripped)]
    if stripped.startswith(("%", "!", "?")):  # `%magic`, `!cmd`, `?obj`: never Python at a statement's start
        return indent + "pass"
    assigned = _ASSIGNED_MAGIC.match(body)
    if assigned:
        return f"{assigned['indent']}{assigned['target']} = ..."
    scanned = state.after(body)
    if scanned.quote is None and body[: scanned.comment_start].rstrip().endswith("?"):  # `obj?`, `obj.method??`: help
        return indent + "pass"
    return None


@dataclass(frozen=True)
class _Scan:
    """What a line leaves open for the next: a string, brackets, a backslash continuation."""

    quote: str | None = None
    depth: int = 0
    continued: bool = False
    comment_start: int | None = None  # in the line just scanned

    @property
    def at_statement_start(self) -> bool:
        return self.quote is None and self.depth == 0 and not self.continued

    def after(self, line: str) -> _Scan:
        quote, depth, at, comment = self.quote, self.depth, 0, None
        while at < len(line):
            char = line[at]
            if quote is not None:
                if char == "\\":
                    at += 2
                    continue
                if line.startswith(quote, at):
                    at += len(quote)
                    quote = None
                    continue
            elif char == "#":
                comment = at
                break
            elif char in "'\"":
                quote = line[at : at + 3] if line[at : at + 3] in ('"""', "'''") else char
                at += len(quote)
                continue
            elif char in "([{":
                depth += 1
            elif char in ")]}":
                depth = max(0, depth - 1)
            at += 1
        continued = comment is None and line.endswith("\\")
        if quote is not None and len(quote) == 1 and not continued:
            quote = None  # an unterminated one-line string: the parser will say so
        return _Scan(quote, depth, continued, comment)


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def _ends_line(text: str) -> bool:
    return not text or text.endswith(("\n", "\r"))


def _terminated(text: str) -> str:
    return text if _ends_line(text) else text + "\n"


def _in_cell(location: Location, cell: CodeCell) -> Location:
    return Location(location.row - cell.first_row + 1, location.column + cell.indent)


def dedent_cell(python: str) -> tuple[str, int]:
    """A cell whose every line starts with the first line's indentation runs in Jupyter (IPython
    removes it): the text without it, and its width."""
    lines = split_lines(python, keepends=True)
    first = next((line for line in lines if line.strip()), "")
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    if not indent or not all(line.startswith(indent) for line in lines if line.strip()):
        return python, 0
    return "".join(line[len(indent) :] if line.strip() else line for line in lines), len(indent)


def _shifted(location: Location, rows: int) -> Location:
    return Location(location.row - rows, location.column)


def read_notebook_file(path: Path) -> tuple[Notebook, str]:
    """A notebook and the encoding to write it back in; raises OSError, UnicodeDecodeError, NotebookError."""
    data = read_regular_file(path)
    encoding = "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"  # JSON is UTF-8; keep a BOM
    return read_notebook(data.decode(encoding)), encoding
