"""Printing findings: concise, full (with the source line and a caret) and ruff's JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from tensorlint.findings import Edit, Finding, Fix
from tensorlint.rules import rule_by_code
from tensorlint.text import split_lines

FORMATS = ("concise", "full", "json")


def escape(text: str) -> str:
    """Control characters in names or messages must not drive the terminal."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def _headline(finding: Finding) -> str:
    code = f"{finding.code} " if finding.code else ""
    return (
        f"{escape(finding.filename)}:{finding.location.row}:{finding.location.column}: {code}{escape(finding.message)}"
    )


def concise(findings: Sequence[Finding], sources: Callable[[str], str | None]) -> str:
    return "".join(_headline(f) + "\n" for f in findings)


def full(findings: Sequence[Finding], sources: Callable[[str], str | None]) -> str:
    blocks = []
    for finding in findings:
        block = [_headline(finding)]
        text = sources(finding.filename)
        lines = split_lines(text) if text is not None else []
        row = finding.location.row
        if 0 < row <= len(lines):
            gutter = str(row)
            line = lines[row - 1].expandtabs(1)
            width = (
                finding.end_location.column - finding.location.column
                if finding.end_location.row == row
                else len(line) - finding.location.column + 1
            )
            block.append(f"{' ' * len(gutter)} |")
            block.append(f"{gutter} | {escape(line)}")
            block.append(f"{' ' * len(gutter)} | {' ' * (finding.location.column - 1)}{'^' * max(width, 1)}")
        rule = rule_by_code(finding.code) if finding.code else None
        if rule is not None:
            block.append(f"  = help: see {rule.url()}")
        blocks.append("\n".join(block) + "\n")
    return "\n".join(blocks)


def to_json(findings: Sequence[Finding], sources: Callable[[str], str | None]) -> str:
    """ruff's JSON: code, message, filename, location, end_location, fix, url, noqa_row."""
    records = []
    for finding in findings:
        rule = rule_by_code(finding.code) if finding.code else None
        records.append(
            {
                "code": finding.code,
                "name": rule.name if rule else None,
                "message": finding.message,
                "filename": str(Path(finding.filename).absolute()) if finding.filename != "-" else "-",
                "location": {"row": finding.location.row, "column": finding.location.column},
                "end_location": {"row": finding.end_location.row, "column": finding.end_location.column},
                "fix": _fix_json(finding.fix),
                "url": rule.url() if rule else None,
                "noqa_row": finding.location.row,
                "cell": None,
            }
        )
    return json.dumps(records, indent=2) + "\n"


def _fix_json(fix: Fix | None) -> dict[str, object] | None:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability.value,
        "message": fix.message,
        "edits": [_edit_json(e) for e in fix.edits],
    }


def _edit_json(edit: Edit) -> dict[str, object]:
    return {
        "content": edit.content,
        "location": {"row": edit.location.row, "column": edit.location.column},
        "end_location": {"row": edit.end_location.row, "column": edit.end_location.column},
    }


WRITERS: dict[str, Callable[[Sequence[Finding], Callable[[str], str | None]], str]] = {
    "concise": concise,
    "full": full,
    "json": to_json,
}


def summary(findings: Sequence[Finding]) -> str:
    count = len(findings)
    if count == 0:
        return "All checks passed!"
    return f"Found {count} error{'s' if count != 1 else ''}."
