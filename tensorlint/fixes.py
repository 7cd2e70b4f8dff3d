"""Applying fixes: text edits, passes until nothing changes, and writing files safely."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import libcst as cst

from tensorlint.engine import lint_notebook, lint_source
from tensorlint.findings import Edit, Finding, applicable
from tensorlint.notebook import Notebook, read_notebook
from tensorlint.source import nesting_problem
from tensorlint.text import apply_edits

Document = TypeVar("Document", str, Notebook)  # what fixes edit: a module's text, or a notebook's cells

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
    current = _fix_passes(
        source,
        result,
        lambda text: lint_source(text, filename, codes=codes),
        lambda _text, _edit: True,
        apply_edits,
        unsafe,
    )
    if current == source:
        return result
    refused = _parse_problem(current)
    if refused is not None:  # never hand back code that does not parse
        return FixResult(source, [], lint_source(source, filename, codes=codes), refused)
    result.source = current
    return result


def _parse_problem(text: str) -> str | None:
    """Why fixed code may not be kept: it does not parse (for LibCST, and for Python where it can)."""
    too_deep = nesting_problem(text)
    if too_deep is not None:
        return f"fixed code would be too deeply nested: {too_deep[1]}"
    try:
        cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        return f"fixed code would not parse: {error.message}"
    except (RecursionError, MemoryError):
        return "fixed code would be too deeply nested to parse"
    return None


def fix_notebook(
    notebook: Notebook, filename: str, *, codes: Collection[str] | None = None, unsafe: bool = False
) -> tuple[FixResult, Notebook]:
    """Fix a notebook's cells; `source` of the result is the new JSON text, with the notebook it holds.

    Only fixes whose edits stay inside one cell and off masked IPython lines apply. The
    remaining findings are located in the new text, so that their file lines are current.
    """
    result = FixResult(notebook.text)
    current = _fix_passes(
        notebook,
        result,
        lambda cells: lint_source(cells.module, filename, codes=codes),
        Notebook.accepts,
        Notebook.edited,
        unsafe,
    )
    if current is notebook:
        result.remaining = [notebook.locate(f) for f in result.remaining]
        return result, notebook
    refused = _parse_problem(current.module)
    if refused is not None:
        remaining = lint_notebook(notebook, filename, codes=codes)
        return FixResult(notebook.text, [], remaining, refused), notebook
    written = read_notebook(current.render())  # read back: file lines of findings in the new text
    result.source = written.text
    result.remaining = [written.locate(f) for f in result.remaining]
    return result, written


def _fix_passes(
    start: Document,
    result: FixResult,
    lint: Callable[[Document], list[Finding]],
    accepts: Callable[[Document, Edit], bool],
    apply: Callable[[Document, list[Edit]], Document],
    unsafe: bool,
) -> Document:
    """Lint, apply the fixes that do not overlap, and again, until none applies (at most MAX_PASSES)."""
    current = start
    for _ in range(MAX_PASSES):
        findings = lint(current)
        result.remaining = findings
        candidates = [
            f
            for f in findings
            if applicable(f, unsafe) and all(accepts(current, e) for e in f.fix.edits)  # type: ignore[union-attr]
        ]
        chosen = _non_overlapping(candidates)
        if not chosen:
            break
        current = apply(current, [edit for f in chosen for edit in f.fix.edits])  # type: ignore[union-attr]
        result.fixed.extend(chosen)
    return current


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
