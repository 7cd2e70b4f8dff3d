"""The library core: lint a source text and return findings. Every front-end calls this."""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Collection
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from tensorlint.analysis import Facts, analyze
from tensorlint.analysis.from_ast import build_module
from tensorlint.analysis.parse import gc_paused, parse_module
from tensorlint.analysis.project import Project
from tensorlint.findings import Edit, Finding, Fix, Location
from tensorlint.noqa import parse_suppressions
from tensorlint.notebook import Notebook, NotebookError, NotPythonNotebook, read_notebook_file
from tensorlint.rule import NodeFix, Report
from tensorlint.rules import all_codes, all_rules
from tensorlint.rules.tl900_unused_noqa import UnusedNoqa
from tensorlint.source import (
    NOTEBOOK_SUFFIX,
    is_test_code,
    nesting_problem,
    read_source,
    read_source_and_encoding,
    reportable,
)
from tensorlint.text import split_lines

_PROJECT = Project()  # the modules that imports resolve to, analysed once per process


def _built_or_parsed(source: str) -> cst.Module:
    return build_module(source) or parse_module(source)


# The imported modules of each file's first analysis, on trees built from `ast` (`_finds_nothing`).
_FIRST_PROJECT = Project(parse=_built_or_parsed)

__all__ = ["lint_file", "lint_notebook", "lint_source", "read_source", "read_source_and_encoding"]


def lint_source(
    source: str,
    filename: str = "<stdin>",
    *,
    codes: Collection[str] | None = None,
    apply_noqa: bool = True,
    project: Project | None = None,
) -> list[Finding]:
    """Lint one module's text. `codes` limits the rules run (all when None).

    When `filename` is a file, its imports resolve to the project's other modules, analysed
    once per process (or per `project`, which an editor makes fresh for each edit).
    """
    enabled = all_codes() if codes is None else frozenset(codes)
    running = _running(source, filename, enabled)
    may_report_unused_noqa = apply_noqa and UnusedNoqa.code in enabled and UnusedNoqa.may_apply(source)
    if not (running or may_report_unused_noqa):
        return []
    if running:
        # No cyclic garbage collection while a tree is alive: the collector would walk its million
        # nodes again and again and find nothing. The tree is freed by reference counting on return.
        with gc_paused():
            findings, analyzed = _analyze(source, filename, running, project)
    else:
        findings, analyzed = [], True
    report_unused_noqa = may_report_unused_noqa and analyzed
    if not apply_noqa or not (findings or report_unused_noqa):
        return findings
    suppressions = parse_suppressions(source)
    if report_unused_noqa:
        lines = split_lines(source, keepends=True)
        findings += UnusedNoqa.unused_directives(suppressions, findings, enabled, filename, lines)
    findings = [f for f in findings if not (f.code and suppressions.suppresses(f.location.row, f.code))]
    return sorted(set(findings), key=lambda f: f.sort_key)


def _running(source: str, filename: str, codes: Collection[str]) -> list[str]:
    """The codes of `codes` whose rules could report in this text; in test code, not the rules
    about growth over a long run."""
    in_tests = is_test_code(filename, source)
    return reportable(
        source, [r.code for r in all_rules() if r.code in codes and not (in_tests and r.grows_over_a_run)]
    )


def _analyze(
    source: str, filename: str, running: Collection[str], project: Project | None
) -> tuple[list[Finding], bool]:
    """The findings of the rules in `running` before `# noqa`, and whether the whole file was analysed."""
    path = _project_file(filename)
    if project is None and _finds_nothing(source, path, running):
        return [], True  # (Python's parser, which that analysis reads, fails safely on deep nesting)
    too_deep = nesting_problem(source)
    if too_deep is not None:  # LibCST's parser would crash the process (a native stack overflow)
        row, reason = too_deep
        where = Location(row, 1)
        return [Finding(None, f"file too deeply nested to parse: {reason}", filename, where, where)], False
    rules = [rule() for rule in all_rules() if rule.code in running]
    project = (project or _PROJECT) if path else None
    try:
        module = (project.parsed(path, source) if project and path else None) or parse_module(source)
    except cst.ParserSyntaxError as error:
        return [_syntax_error(error, source, filename)], False
    except (RecursionError, MemoryError) as error:
        return [_unparsable(filename, f"file too deeply nested to parse ({type(error).__name__})")], False
    try:
        facts = analyze(module, path=path, project=project, walk_units=any(rule.reads_flow for rule in rules))
        reports = [(rule.code, report) for rule in rules for report in rule.check(facts)]
        located_findings = _locate(module, reports, filename) if reports else []  # positions walk the tree again
        _release(facts)
    except RecursionError:
        return [_unparsable(filename, "file too deeply nested to analyse")], False
    return sorted(set(located_findings), key=lambda f: f.sort_key), True


def _finds_nothing(source: str, path: Path | None, codes: Collection[str]) -> bool:
    """Whether the file gives no finding, analysed on a tree built from Python's own parser.

    Most files give none, and LibCST's parser costs about seven times Python's: a file is parsed
    by LibCST, and analysed again on that tree, only when this first analysis finds something
    (positions, fixes and the code that messages quote come from LibCST's tree of the text).
    The built tree has the nodes of LibCST's own (`analysis/from_ast.py`), so the first analysis
    finds what the second would: tests/test_from_ast.py and bench/screen.py check it. An editor,
    which passes its own `project`, always parses with LibCST.
    """
    project = _FIRST_PROJECT if path else None
    module = (project.parsed(path, source) if project and path else None) or build_module(source)
    if module is None:
        return False
    try:
        rules = [rule for rule in all_rules() if rule.code in codes]
        facts = analyze(module, path=path, project=project, walk_units=any(rule.reads_flow for rule in rules))
        found = any(True for rule in rules for _ in rule().check(facts))
        _release(facts)
    except Exception:  # the analysis on LibCST's own tree decides: it reports or raises as it always did
        return False
    return not found


def _release(facts: Facts) -> None:
    """The tree is freed on return, by reference counting; so are the imported modules dropped
    while the file was checked."""
    facts.index.release()
    if facts.project is not None:
        facts.project.release_dropped()


def _project_file(filename: str) -> Path | None:
    """The file a text is, when its imports resolve to the project's other modules."""
    path = Path(filename)
    return path if path.suffix == ".py" and path.is_file() else None


_LINE_BREAK = re.compile(r"\s*\n\s*")


def _locate(module: cst.Module, reports: list[tuple[str, Report]], filename: str) -> list[Finding]:
    """Positions cost a second pass over the tree: computed only for files with findings."""
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    findings = []
    for code, report in reports:
        span = positions.get(report.node)
        if span is None:  # a node from another module's tree: never the user's to see
            continue
        findings.append(
            Finding(
                code=code,
                message=_LINE_BREAK.sub(" ", report.message),  # code quoted over several lines: one line
                filename=filename,
                location=Location(span.start.line, span.start.column + 1),
                end_location=Location(span.end.line, span.end.column + 1),
                fix=_text_fix(module, report.fix) if report.fix else None,
            )
        )
    return findings


def _text_fix(module: cst.Module, fix: NodeFix) -> Fix:
    """Text edits for a fix: each replacement rendered in its place in the whole module.

    A node rendered alone loses the indentation of the block around it, which multi-line
    calls need; so the module is rendered with the replacement and the edit is the span
    where the two texts differ.
    """
    original = module.code
    edits = []
    for old, new in fix.replacements:
        changed = module.deep_replace(old, new)
        assert isinstance(changed, cst.Module)
        edits.append(_difference(original, changed.code))
    return Fix(fix.message, fix.applicability, tuple(sorted(edits, key=lambda e: e.location)))


def _difference(before: str, after: str) -> Edit:
    """The one edit that turns `before` into `after`: the span between their common ends."""
    limit = min(len(before), len(after))
    start = 0
    while start < limit and before[start] == after[start]:
        start += 1
    end = 0
    while end < limit - start and before[-1 - end] == after[-1 - end]:
        end += 1
    return Edit(after[start : len(after) - end], _location(before, start), _location(before, len(before) - end))


def _location(text: str, offset: int) -> Location:
    lines = split_lines(text[:offset], keepends=True)
    if not lines or lines[-1].endswith(("\n", "\r")):
        return Location(len(lines) + 1, 1)
    return Location(len(lines), len(lines[-1]) + 1)


def _syntax_error(error: cst.ParserSyntaxError, source: str, filename: str) -> Finding:
    """Python's own parser places syntax errors better than LibCST's does: ask it first."""
    try:
        with warnings.catch_warnings():  # the user's code's warnings (invalid escapes) are not ours to print
            warnings.simplefilter("ignore")
            compile(source, filename, "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except SyntaxError as python_error:
        location = Location(python_error.lineno or 1, python_error.offset or 1)
        return Finding(None, f"SyntaxError: {python_error.msg}", filename, location, location)
    except (ValueError, RecursionError, MemoryError):  # null bytes, nesting: fall back to LibCST
        pass
    location = Location(error.raw_line, error.raw_column + 1)
    message = str(error.message).strip().splitlines()[0] if error.message else "invalid syntax"
    return Finding(None, f"SyntaxError: {message}", filename, location, location)


def _unparsable(filename: str, message: str) -> Finding:
    return Finding(None, message, filename, Location(1, 1), Location(1, 1))


def lint_notebook(
    notebook: Notebook, filename: str, *, codes: Collection[str] | None = None, apply_noqa: bool = True
) -> list[Finding]:
    """Lint a notebook's code cells as one module; each finding learns its cell and its line in the file."""
    return [notebook.locate(f) for f in lint_source(notebook.module, filename, codes=codes, apply_noqa=apply_noqa)]


def lint_file_and_dependencies(path: Path, *, codes: Collection[str] | None = None) -> tuple[list[Finding], list[Path]]:
    """A file's findings, and the other files of the project that its imports resolved to."""
    _PROJECT.loaded.clear()
    _FIRST_PROJECT.loaded.clear()
    findings = lint_file(path, codes=codes)
    loaded = _PROJECT.loaded | _FIRST_PROJECT.loaded
    return findings, sorted(loaded - {Path(os.path.realpath(path))})  # realpath: a link loop never raises


def lint_file(path: Path, *, codes: Collection[str] | None = None, apply_noqa: bool = True) -> list[Finding]:
    """Lint one file; a file that cannot be read or decoded is reported, not raised.

    A `.ipynb` file is linted as a notebook. One in another language raises NotPythonNotebook:
    it is not an error, and the caller decides whether to say that it was skipped.
    """
    try:
        if path.suffix == NOTEBOOK_SUFFIX:
            notebook, _ = read_notebook_file(path)
            return lint_notebook(notebook, str(path), codes=codes, apply_noqa=apply_noqa)
        source = read_source(path)
    except NotPythonNotebook:
        raise
    except NotebookError as error:
        return [_unparsable(str(path), f"cannot read notebook: {error}")]
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return [_unparsable(str(path), f"cannot read file: {reason}")]
    return lint_source(source, str(path), codes=codes, apply_noqa=apply_noqa)
