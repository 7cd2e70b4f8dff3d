"""ruff's JSON records, as one array (`json`) or one object per line (`json-lines`).

JSON escapes control characters itself; file names stay exact so that tools can open them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from tensorlint.findings import Edit, Finding, Fix, Location
from tensorlint.output.context import OutputContext, rule_of


def record(finding: Finding) -> dict[str, object]:
    """ruff's fields: code, name, message, filename, location, end_location, fix, url, noqa_row, cell.

    In a notebook, as in ruff, `location`, `end_location` and the fix's edits are in the cell
    named by `cell`, and `noqa_row` is the row in the cells joined. Beyond ruff's fields,
    `file_location` and `file_end_location` give the place in the file as stored (a notebook's
    JSON text), for tools that only know files.
    """
    rule = rule_of(finding)
    cell = finding.cell
    start, end = (cell.location, cell.end_location) if cell else (finding.location, finding.end_location)
    # Edits are moved by the finding's own offset: tensorlint's fixes edit the reported statement.
    rows_before_cell = finding.location.row - cell.location.row if cell else 0
    return {
        "code": finding.code,
        "name": rule.name if rule else None,
        "message": finding.message,
        "filename": str(Path(finding.filename).absolute()) if finding.filename != "-" else "-",
        "location": _position(start),
        "end_location": _position(end),
        "fix": _fix(finding.fix, rows_before_cell),
        "url": rule.url() if rule else None,
        "noqa_row": finding.location.row,
        "cell": cell.cell if cell else None,
        "file_location": _position(finding.file_location),
        "file_end_location": _position(finding.file_end_location),
    }


def _position(location: Location, rows_before: int = 0) -> dict[str, int]:
    return {"row": location.row - rows_before, "column": location.column}


def json_array(findings: Sequence[Finding], context: OutputContext) -> str:
    return json.dumps([record(f) for f in findings], indent=2) + "\n"


def json_lines(findings: Sequence[Finding], context: OutputContext) -> str:
    return "".join(json.dumps(record(f)) + "\n" for f in findings)


def _fix(fix: Fix | None, rows_before_cell: int) -> dict[str, object] | None:
    if fix is None:
        return None
    edits = [_edit(e, rows_before_cell) for e in fix.edits]
    return {"applicability": fix.applicability.value, "message": fix.message, "edits": edits}


def _edit(edit: Edit, rows_before_cell: int) -> dict[str, object]:
    return {
        "content": edit.content,
        "location": _position(edit.location, rows_before_cell),
        "end_location": _position(edit.end_location, rows_before_cell),
    }
