"""What one `check` run found and fixed (`Run`), and the report it writes: the findings in the
chosen format (or their statistics), the fixes on offer, and ruff's closing lines."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tensorlint.findings import Finding, Location
from tensorlint.output import HUMAN_FORMATS, WRITERS, FixAdvice, OutputContext, escape, fix_listing, statistics, summary
from tensorlint.source import NOTEBOOK_SUFFIX, read_source

if TYPE_CHECKING:
    from tensorlint.notebook import NotebookError


@dataclass
class Run:
    """What one check found (and fixed), and the texts it read (for source lines in the output)."""

    findings: list[Finding] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    failed: bool = False  # a missing path or an internal error: exit 2
    fixed: int = 0  # findings whose fix was applied (or, with --diff, would be)
    diffs: int = 0  # files --diff printed a diff for

    def skipped(self, name: str, reason: str) -> None:
        """Not an error: the run goes on, and says why it skipped (`name` and `reason` as given)."""
        sys.stderr.write(f"tensorlint: warning: {name}: skipped: {reason}\n")

    def internal_error(self, path: Path, reason: str) -> None:
        sys.stderr.write(f"tensorlint: internal error while checking {escape(str(path))}: {escape(reason)}\n")
        self.failed = True

    def unreadable_notebook(self, name: str, error: NotebookError) -> None:
        where = Location(1, 1)
        self.findings.append(Finding(None, f"cannot read notebook: {error}", name, where, where))


@dataclass(frozen=True)
class ReportOptions:
    """The reporting flags of `check`."""

    output_format: str  # a key of `output.WRITERS`
    statistics: bool  # counts per code instead of the findings
    show_fixes: bool  # list the fixes available
    quiet: bool  # no closing lines
    fix: bool  # the closing line says what --fix did
    unsafe_fixes: bool  # fixes that may change behaviour count as applicable
    pre_commit: bool = False  # run by the pre-commit hook: hints name the hook's `args:`, not flags

    @property
    def advice(self) -> FixAdvice:
        return FixAdvice(unsafe=self.unsafe_fixes, pre_commit=self.pre_commit)


def write_report(run: Run, options: ReportOptions, stream: TextIO, *, colour: bool) -> None:
    def source_of(filename: str) -> str | None:
        if filename not in run.sources:
            path = Path(filename)
            if path.suffix == NOTEBOOK_SUFFIX:
                return _notebook_source(run, filename)
            try:
                run.sources[filename] = read_source(path)
            except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
                return None
        return run.sources[filename]

    human = options.output_format in HUMAN_FORMATS
    if options.statistics:
        stream.write(statistics(run.findings, as_json=options.output_format == "json"))
    else:
        stream.write(WRITERS[options.output_format](run.findings, OutputContext(source_of, colour)))
    if options.show_fixes and human:
        stream.write(fix_listing(run.findings, options.advice))
    closing = _closing_lines(run, options) if human and not options.quiet else ""
    if closing:
        stream.write(closing + "\n")


def _notebook_source(run: Run, filename: str) -> str | None:
    """A notebook's cells, row for row as findings count them."""
    from tensorlint.notebook import NotebookError, read_notebook_file  # here: only a notebook's report reads one

    try:
        run.sources[filename] = read_notebook_file(Path(filename))[0].display_source
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError, NotebookError):
        return None
    return run.sources[filename]


def _closing_lines(run: Run, options: ReportOptions) -> str:
    """ruff's closing lines: the count (with what --fix did), then what --fix could do."""
    fixed = run.fixed if options.fix else 0
    if run.failed and not run.findings and not fixed:
        return ""  # a path was missing or a check failed: "All checks passed!" would not be true
    hint = options.advice.hint(run.findings)
    return summary(run.findings, fixed) + (f"\n{hint}" if hint else "")
