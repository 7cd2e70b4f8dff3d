"""Applying fixes: text edits, passes until nothing changes, and writing files safely."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import libcst as cst

from tensorlint.engine import lint_source
from tensorlint.findings import Edit, Finding, applicable
from tensorlint.text import split_lines

MAX_PASSES = 10


@dataclass
class FixResult:
    source: str  # the fixed text (the original when nothing applied or the result does not parse)
    fixed: list[Finding] = field(default_factory=list)  # findings whose fix was applied
    remaining: list[Finding] = field(default_factory=list)  # findings after the last pass
    refused: str | None = None  # why fixes were not kept, when they were not


def fix_source(source: str, filename: str, *, codes: Collection[str] | None = None, unsafe: bool = False) -> FixResult:
    """Lint and fix until no applicable fix is left; overlapping fixes wait for a later pass."""
    result = FixResult(source)
    current = source
    for _ in range(MAX_PASSES):
        findings = lint_source(current, filename, codes=codes)
        chosen = _non_overlapping([f for f in findings if applicable(f, unsafe)])
        result.remaining = findings
        if not chosen:
            break
        current = apply_edits(current, [edit for f in chosen for edit in f.fix.edits])  # type: ignore[union-attr]
        result.fixed.extend(chosen)
    if current == source:
        return result
    try:
        cst.parse_module(current)
    except cst.ParserSyntaxError as error:  # never hand back code that does not parse
        return FixResult(
            source, [], lint_source(source, filename, codes=codes), f"fixed code would not parse: {error.message}"
        )
    result.source = current
    return result


def _non_overlapping(findings: Sequence[Finding]) -> list[Finding]:
    chosen: list[Finding] = []
    taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for finding in sorted(findings, key=lambda f: f.location):
        assert finding.fix is not None
        spans = [
            ((e.location.row, e.location.column), (e.end_location.row, e.end_location.column))
            for e in finding.fix.edits
        ]
        # Touching spans count as overlapping: two insertions at one point must not both apply.
        if any(start <= t_end and t_start <= end for start, end in spans for t_start, t_end in taken):
            continue
        chosen.append(finding)
        taken.extend(spans)
    return chosen


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits; rows and columns are 1-based, columns in characters."""
    lines = split_lines(source, keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(row: int, column: int) -> int:
        return starts[row - 1] + column - 1 if row - 1 < len(starts) else len(source)

    for edit in sorted(edits, key=lambda e: e.location, reverse=True):
        begin = offset(edit.location.row, edit.location.column)
        end = offset(edit.end_location.row, edit.end_location.column)
        source = source[:begin] + edit.content + source[end:]
    return source
