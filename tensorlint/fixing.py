"""`check --fix` and `check --diff`: fix files, notebooks and stdin with fixes.py, then write the
fixed text back (atomically) or print a unified diff and write nothing.

LibCST is imported only when there is something to fix; the command line imports this module only
for --fix and --diff.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tensorlint.files import write_atomically
from tensorlint.findings import Finding, Location
from tensorlint.notebook import Notebook, NotebookError, NotPythonNotebook, read_notebook, read_notebook_file
from tensorlint.output import escape
from tensorlint.report import Run
from tensorlint.runner import Task
from tensorlint.source import NOTEBOOK_SUFFIX, read_source_and_encoding
from tensorlint.time_limit import TimeLimitExceeded, time_limit

if TYPE_CHECKING:
    from tensorlint.fixes import FixResult


@dataclass(frozen=True)
class FixOptions:
    """How fixes are applied: `--diff` prints them and writes nothing; `--fix` alone writes them."""

    diff: bool
    unsafe: bool  # --unsafe-fixes: also fixes that may change behaviour

    @property
    def writes(self) -> bool:
        return not self.diff


def fix_files(run: Run, tasks: Iterable[Task], options: FixOptions) -> None:
    """Fixes rewrite files in passes: one file at a time, in this process, never cached."""
    for task in tasks:
        try:
            with time_limit(task.time_limit):
                fix_file(run, task.path, task.codes, options)
        except TimeLimitExceeded as error:  # the file is left as it was: writes are atomic
            where = Location(1, 1)
            run.findings.append(Finding(None, f"not fixed: {error}", str(task.path), where, where))
        except NotPythonNotebook as error:
            run.skipped(escape(str(task.path)), str(error))
        except Exception as error:
            run.internal_error(task.path, f"{type(error).__name__}: {error}")


def fix_file(run: Run, path: Path, codes: frozenset[str], options: FixOptions) -> None:
    if path.suffix == NOTEBOOK_SUFFIX:
        _fix_notebook_file(run, path, codes, options)
        return
    try:
        source, encoding = read_source_and_encoding(path)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        from tensorlint.engine import lint_file

        run.findings.extend(lint_file(path, codes=codes))  # reports why it cannot be read
        return
    from tensorlint.fixes import fix_source

    result = fix_source(source, str(path), codes=codes, unsafe=options.unsafe)
    _record_fixes(run, result, str(path), source, options)
    if options.writes and result.source != source:
        write_atomically(path, result.source, encoding)


def fix_stdin(run: Run, text: str, name: str, codes: frozenset[str], options: FixOptions) -> None:
    """As for a file, but `--fix` writes the fixed text (a module's, or a notebook's JSON) to stdout."""
    if name.endswith(NOTEBOOK_SUFFIX):
        _fix_stdin_notebook(run, text, name, codes, options)
        return
    from tensorlint.fixes import fix_source  # here, as the engine: only when there is source to fix

    result = fix_source(text, name, codes=codes, unsafe=options.unsafe)
    _record_fixes(run, result, name, text, options)
    if options.writes:
        sys.stdout.write(result.source)  # as ruff: the fixed text replaces the input


def _fix_stdin_notebook(run: Run, text: str, name: str, codes: frozenset[str], options: FixOptions) -> None:
    from tensorlint.fixes import fix_notebook

    try:
        notebook = read_notebook(text)
    except NotPythonNotebook as error:
        run.skipped(escape(name), str(error))
        if options.writes:
            sys.stdout.write(text)
        return
    except NotebookError as error:
        run.unreadable_notebook(name, error)
        if options.writes:
            sys.stdout.write(text)
        return
    run.sources[name] = notebook.display_source
    result, fixed = fix_notebook(notebook, name, codes=codes, unsafe=options.unsafe)
    _record_notebook_fixes(run, result, name, notebook, fixed, options)
    if options.writes:
        sys.stdout.write(result.source)


def _fix_notebook_file(run: Run, path: Path, codes: frozenset[str], options: FixOptions) -> None:
    from tensorlint.engine import lint_file
    from tensorlint.fixes import fix_notebook

    try:
        notebook, encoding = read_notebook_file(path)
    except NotPythonNotebook:
        raise
    except (OSError, UnicodeDecodeError, NotebookError):
        run.findings.extend(lint_file(path, codes=codes))  # reports why it cannot be read
        return
    result, fixed = fix_notebook(notebook, str(path), codes=codes, unsafe=options.unsafe)
    _record_notebook_fixes(run, result, str(path), notebook, fixed, options)
    if options.writes and result.source != notebook.text:
        write_atomically(path, result.source, encoding)


def _record_fixes(run: Run, result: FixResult, name: str, source: str, options: FixOptions) -> None:
    _record(run, result, name)
    run.sources[name] = result.source
    if options.diff and result.source != source:
        run.diffs += 1
        before, after = source.splitlines(keepends=True), result.source.splitlines(keepends=True)
        sys.stdout.writelines(difflib.unified_diff(before, after, name, name))


def _record_notebook_fixes(
    run: Run, result: FixResult, name: str, before: Notebook, after: Notebook, options: FixOptions
) -> None:
    """As for a file, but the diff is per changed cell (`path:cell N`), as ruff prints it."""
    _record(run, result, name)
    run.sources[name] = after.display_source
    if options.diff and result.source != before.text:
        run.diffs += 1
        old_cells = {cell.number: cell.source for cell in before.cells}
        for cell in after.cells:
            if cell.source != old_cells.get(cell.number, cell.source):
                label = f"{name}:cell {cell.number}"
                old, new = old_cells[cell.number].splitlines(keepends=True), cell.source.splitlines(keepends=True)
                for line in difflib.unified_diff(old, new, label, label):
                    # cells rarely end with a newline: mark it, as git does, so the next line stays apart
                    sys.stdout.write(line if line.endswith("\n") else line + "\n\\ No newline at end of cell\n")


def _record(run: Run, result: FixResult, name: str) -> None:
    if result.refused:
        sys.stderr.write(f"tensorlint: error: {escape(name)}: fixes not applied: {escape(result.refused)}\n")
        run.failed = True
    run.fixed += len(result.fixed)
    run.findings.extend(result.remaining)
