"""ruff's JSON records, as one array (`json`) or one object per line (`json-lines`).

JSON escapes control characters itself; file names stay exact so that tools can open them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from tensorlint.findings import Edit, Finding, Fix
from tensorlint.output.context import OutputContext, rule_of


def record(finding: Finding) -> dict[str, object]:
    """ruff's fields: code, name, message, filename, location, end_location, fix, url, noqa_row, cell."""
    rule = rule_of(finding)
    return {
        "code": finding.code,
        "name": rule.name if rule else None,
        "message": finding.message,
        "filename": str(Path(finding.filename).absolute()) if finding.filename != "-" else "-",
        "location": {"row": finding.location.row, "column": finding.location.column},
        "end_location": {"row": finding.end_location.row, "column": finding.end_location.column},
        "fix": _fix(finding.fix),
        "url": rule.url() if rule else None,
        "noqa_row": finding.location.row,
        "cell": None,
    }


def json_array(findings: Sequence[Finding], context: OutputContext) -> str:
    return json.dumps([record(f) for f in findings], indent=2) + "\n"


def json_lines(findings: Sequence[Finding], context: OutputContext) -> str:
    return "".join(json.dumps(record(f)) + "\n" for f in findings)


def _fix(fix: Fix | None) -> dict[str, object] | None:
    if fix is None:
        return None
    return {"applicability": fix.applicability.value, "message": fix.message, "edits": [_edit(e) for e in fix.edits]}


def _edit(edit: Edit) -> dict[str, object]:
    return {
        "content": edit.content,
        "location": {"row": edit.location.row, "column": edit.location.column},
        "end_location": {"row": edit.end_location.row, "column": edit.end_location.column},
    }
