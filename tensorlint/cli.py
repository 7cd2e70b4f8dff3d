"""The command line: `tensorlint [check] PATH...`, `verify FILE`, `rule CODE`, `rules`, `server`."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tensorlint import __version__
from tensorlint.add_noqa import AddNoqaError, add_noqa_to_file
from tensorlint.arguments import Parser
from tensorlint.cache import ResultCache, default_cache_dir
from tensorlint.config import Config, ConfigError, ConfigFinder, expand, validate_selectors
from tensorlint.docs import render_table, rule_record
from tensorlint.files import Missing, Skipped, discover, write_atomically
from tensorlint.findings import Finding, Location, applicable
from tensorlint.notebook import (
    NOTEBOOK_SUFFIX,
    Notebook,
    NotebookError,
    NotPythonNotebook,
    read_notebook,
    read_notebook_file,
)
from tensorlint.output import (
    FORMATS,
    HUMAN_FORMATS,
    WRITERS,
    OutputContext,
    escape,
    fix_listing,
    statistics,
    summary,
    use_colour,
)
from tensorlint.rules import all_rules, rule_by_code
from tensorlint.runner import Task, check_files, default_jobs
from tensorlint.source import UNUSED_NOQA_CODE, read_source, read_source_and_encoding
from tensorlint.time_limit import DEFAULT_SECONDS, TimeLimitExceeded, time_limit

if TYPE_CHECKING:
    from tensorlint.fixes import FixResult

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _check_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tensorlint check",
        description="Find PyTorch memory-leak patterns before the code runs.",
    )
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders to check ('-' reads stdin); default: .")
    parser.add_argument("--stdin-filename", help="the name to report for source read from stdin")
    parser.add_argument("--version", action="version", version=f"tensorlint {__version__}")

    selection = parser.add_argument_group("rule selection (codes or prefixes: TL001, TL00, TL, ALL)")
    selection.add_argument(
        "--select", help="comma-separated codes or prefixes to enable, replacing the configured ones"
    )
    selection.add_argument("--extend-select", help="comma-separated codes or prefixes to enable in addition")
    selection.add_argument("--ignore", help="comma-separated codes or prefixes to disable")

    configuration = parser.add_argument_group("configuration")
    source = configuration.add_mutually_exclusive_group()
    source.add_argument(
        "--config", type=Path, metavar="FILE", help="use this TOML file's [tool.tensorlint] for every file"
    )
    source.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    configuration.add_argument("--force-exclude", action="store_true", help="apply excludes to files named explicitly")

    speed = parser.add_argument_group("speed")
    speed.add_argument(
        "-j", "--jobs", type=_jobs, default=0, metavar="N", help="files checked in parallel (default 0: all cores)"
    )
    speed.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_SECONDS,
        metavar="SECONDS",
        help=f"time limit per file; a file over it is reported, not checked (default {DEFAULT_SECONDS:g}; 0: none)",
    )
    speed.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    speed.add_argument(
        "--cache-dir", type=Path, metavar="DIR", help="where the result cache lives (default: .tensorlint_cache)"
    )

    reporting = parser.add_argument_group("reporting")
    reporting.add_argument("--output-format", choices=FORMATS, default="concise")
    reporting.add_argument("-o", "--output-file", type=Path, metavar="FILE", help="write the report to FILE")
    reporting.add_argument("--statistics", action="store_true", help="count findings per code instead of listing them")
    reporting.add_argument("--show-fixes", action="store_true", help="list the fixes available for the findings")
    reporting.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    reporting.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")

    fixing = parser.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply fixes (safe ones; unsafe too with --unsafe-fixes)")
    fixing.add_argument("--unsafe-fixes", action="store_true", help="include fixes that may change behaviour")
    fixing.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    fixing.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when anything was fixed")

    suppression = parser.add_argument_group("suppression")
    suppression.add_argument(
        "--add-noqa", action="store_true", help="add `# noqa: CODE` comments to silence every current finding"
    )
    return parser


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        jobs = -1
    if jobs < 0:
        raise argparse.ArgumentTypeError(f"expected a number of jobs (0: all cores), got {value!r}")
    return jobs


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"expected a number of seconds (0: no limit), got {value!r}")
    return seconds


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("--version", "-V"):
        print(f"tensorlint {__version__}")
        return EXIT_CLEAN
    if args and args[0] == "rule":
        return _rule(args[1:])
    if args and args[0] == "rules":
        return _rules(args[1:])
    if args and args[0] == "verify":
        return _verify(args[1:])
    if args and args[0] in ("server", "lsp"):
        return _server()
    if args and args[0] == "check":
        args = args[1:]
    try:
        return _check(_check_parser().parse_args(args))
    except ConfigError as error:
        sys.stderr.write(f"tensorlint: error: {error}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("tensorlint: interrupted\n")
        return 130


@dataclass
class _Run:
    """What one check found (and fixed), and the texts it read (for source lines in the output)."""

    findings: list[Finding] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    failed: bool = False  # a missing path or an internal error: exit 2
    fixed: int = 0  # findings whose fix was applied (or, with --diff, would be)
    diffs: int = 0  # files --diff printed a diff for


@dataclass(frozen=True)
class _Selection:
    """The command line's selectors, applied on top of each file's configuration."""

    select: tuple[str, ...] | None
    extend_select: tuple[str, ...]
    ignore: tuple[str, ...]

    @classmethod
    def from_options(cls, options: argparse.Namespace) -> _Selection:
        def selectors(value: str | None, flag: str) -> tuple[str, ...]:
            return validate_selectors(value.split(","), flag) if value else ()

        return cls(
            select=selectors(options.select, "--select") if options.select else None,
            extend_select=selectors(options.extend_select, "--extend-select"),
            ignore=selectors(options.ignore, "--ignore"),
        )

    def codes(self, config: Config, path: Path | None) -> frozenset[str]:
        """As in ruff: --select replaces the configured selection; extend-select and ignores of both kinds apply."""
        if self.select is not None:
            config = dataclasses.replace(config, select=self.select)
        return (config.codes_for(path) | expand(self.extend_select)) - expand(self.ignore)


def _check(options: argparse.Namespace) -> int:
    paths: list[Path] = options.paths or [Path(".")]
    configs = ConfigFinder.for_command_line(options.config, options.isolated)
    selection = _Selection.from_options(options)
    if options.add_noqa and any(str(path) == "-" for path in paths):
        raise ConfigError("--add-noqa cannot edit source read from stdin")
    run = _lint(paths, configs, selection, options)
    if options.add_noqa:
        return _add_noqa(run)
    if options.diff:  # as ruff: the diff is the report; exit 1 when there is one
        if not options.quiet:
            sys.stderr.write(f"Would fix {run.fixed} error{'s' if run.fixed != 1 else ''}.\n")
        return EXIT_ERROR if run.failed else (EXIT_FINDINGS if run.diffs else EXIT_CLEAN)
    fixed_stdin = options.fix and any(str(path) == "-" for path in paths)
    if options.output_file is not None:
        with options.output_file.open("w", encoding="utf-8") as stream:
            _report(run, options, stream, colour=False)
    else:
        stream = sys.stderr if fixed_stdin else sys.stdout  # stdout carries the fixed source
        _report(run, options, stream, colour=use_colour(stream))
    if run.failed:
        return EXIT_ERROR
    if (run.findings and not options.exit_zero) or (run.fixed and options.exit_non_zero_on_fix):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _lint(paths: list[Path], configs: ConfigFinder, selection: _Selection, options: argparse.Namespace) -> _Run:
    run = _Run()
    if any(str(path) == "-" for path in paths):
        name = options.stdin_filename or "-"
        source = sys.stdin.read()
        run.sources[name] = source
        stdin_path = Path(name) if options.stdin_filename else None
        config = configs(stdin_path) if stdin_path else configs.fallback
        codes = selection.codes(config, stdin_path)
        if name.endswith(NOTEBOOK_SUFFIX):
            _stdin_notebook(run, source, name, codes, options)
        elif options.fix or options.diff:
            from tensorlint.fixes import fix_source  # here, as the engine: only when there is source to fix

            result = fix_source(source, name, codes=codes, unsafe=options.unsafe_fixes)
            _record_fixes(run, result, name, source, options)
            if options.fix and not options.diff:
                sys.stdout.write(result.source)  # as ruff: the fixed text replaces the input
        else:
            from tensorlint.engine import lint_source  # here: a cached run of files never imports LibCST

            run.findings.extend(lint_source(source, name, codes=codes))
    files = [path for path in paths if str(path) != "-"]
    tasks = []
    for item in discover(files, configs, force_exclude=options.force_exclude) if files else ():
        if isinstance(item, Missing):
            sys.stderr.write(f"tensorlint: error: {escape(str(item.path))}: No such file or directory\n")
            run.failed = True
        elif isinstance(item, Skipped):  # not Python source: the run goes on, and says why it skipped
            sys.stderr.write(f"tensorlint: warning: {escape(str(item.path))}: skipped: {item.reason}\n")
        else:
            tasks.append(Task(item, selection.codes(configs(item), item), options.timeout or None))
    if options.fix or options.diff:  # fixes rewrite files in passes: one file at a time, never cached
        for task in tasks:
            try:
                with time_limit(task.time_limit):
                    _fix_file(run, task.path, task.codes, options)
            except TimeLimitExceeded as error:  # the file is left as it was: writes are atomic
                where = Location(1, 1)
                run.findings.append(Finding(None, f"not fixed: {error}", str(task.path), where, where))
            except NotPythonNotebook as error:  # not an error: the run goes on, and says why it skipped
                sys.stderr.write(f"tensorlint: warning: {escape(str(task.path))}: skipped: {error}\n")
            except Exception as error:
                _internal_error(run, task.path, f"{type(error).__name__}: {error}")
    else:
        cache = None if options.no_cache else ResultCache(options.cache_dir or default_cache_dir(configs.fallback.root))
        for checked in check_files(tasks, jobs=options.jobs or default_jobs(), cache=cache):
            if checked.error is not None:
                _internal_error(run, checked.path, checked.error)
            if checked.skipped is not None:  # not an error: the run goes on, and says why it skipped
                sys.stderr.write(
                    f"tensorlint: warning: {escape(str(checked.path))}: skipped: {escape(checked.skipped)}\n"
                )
            run.findings.extend(checked.findings)
    run.findings.sort(key=lambda f: f.sort_key)
    return run


def _stdin_notebook(run: _Run, text: str, name: str, codes: frozenset[str], options: argparse.Namespace) -> None:
    """A notebook read from stdin: as a file, but the fixed JSON goes to stdout."""
    from tensorlint.engine import lint_notebook  # here: a cached run of files never imports LibCST
    from tensorlint.fixes import fix_notebook

    try:
        notebook = read_notebook(text)
    except NotPythonNotebook as error:
        sys.stderr.write(f"tensorlint: warning: {escape(name)}: skipped: {error}\n")
        if options.fix and not options.diff:
            sys.stdout.write(text)
        return
    except NotebookError as error:
        run.findings.extend(_unreadable_notebook(name, error))
        if options.fix and not options.diff:
            sys.stdout.write(text)
        return
    run.sources[name] = notebook.display_source
    if not (options.fix or options.diff):
        run.findings.extend(lint_notebook(notebook, name, codes=codes))
        return
    result, fixed = fix_notebook(notebook, name, codes=codes, unsafe=options.unsafe_fixes)
    _record_notebook_fixes(run, result, name, notebook, fixed, options)
    if options.fix and not options.diff:
        sys.stdout.write(result.source)


def _unreadable_notebook(name: str, error: NotebookError) -> list[Finding]:
    where = Location(1, 1)
    return [Finding(None, f"cannot read notebook: {error}", name, where, where)]


def _fix_notebook_file(run: _Run, path: Path, codes: frozenset[str], options: argparse.Namespace) -> None:
    from tensorlint.engine import lint_file
    from tensorlint.fixes import fix_notebook

    try:
        notebook, encoding = read_notebook_file(path)
    except NotPythonNotebook:
        raise
    except (OSError, UnicodeDecodeError, NotebookError):
        run.findings.extend(lint_file(path, codes=codes))  # reports why it cannot be read
        return
    result, fixed = fix_notebook(notebook, str(path), codes=codes, unsafe=options.unsafe_fixes)
    _record_notebook_fixes(run, result, str(path), notebook, fixed, options)
    if options.fix and not options.diff and result.source != notebook.text:
        write_atomically(path, result.source, encoding)


def _record_notebook_fixes(
    run: _Run, result: FixResult, name: str, before: Notebook, after: Notebook, options: argparse.Namespace
) -> None:
    """As for a file, but the diff is per changed cell (`path:cell N`), as ruff prints it."""
    if result.refused:
        sys.stderr.write(f"tensorlint: error: {escape(name)}: fixes not applied: {escape(result.refused)}\n")
        run.failed = True
    run.fixed += len(result.fixed)
    run.findings.extend(result.remaining)
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


def _internal_error(run: _Run, path: Path, reason: str) -> None:
    sys.stderr.write(f"tensorlint: internal error while checking {escape(str(path))}: {escape(reason)}\n")
    run.failed = True


def _fix_file(run: _Run, path: Path, codes: frozenset[str], options: argparse.Namespace) -> None:
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

    result = fix_source(source, str(path), codes=codes, unsafe=options.unsafe_fixes)
    _record_fixes(run, result, str(path), source, options)
    if options.fix and not options.diff and result.source != source:
        write_atomically(path, result.source, encoding)


def _record_fixes(run: _Run, result: FixResult, name: str, source: str, options: argparse.Namespace) -> None:
    if result.refused:
        sys.stderr.write(f"tensorlint: error: {escape(name)}: fixes not applied: {escape(result.refused)}\n")
        run.failed = True
    run.fixed += len(result.fixed)
    run.findings.extend(result.remaining)
    run.sources[name] = result.source
    if options.diff and result.source != source:
        run.diffs += 1
        before, after = source.splitlines(keepends=True), result.source.splitlines(keepends=True)
        sys.stdout.writelines(difflib.unified_diff(before, after, name, name))


def _summary(run: _Run, options: argparse.Namespace) -> str:
    """ruff's closing lines: the count, what --fix did, or what it could do."""
    if options.fix:
        total = len(run.findings) + run.fixed
        if total == 0:
            return summary([])
        return f"Found {total} error{'s' if total != 1 else ''} ({run.fixed} fixed, {len(run.findings)} remaining)."
    text = summary(run.findings)
    fixable = sum(1 for f in run.findings if applicable(f, options.unsafe_fixes))
    hidden = sum(1 for f in run.findings if f.fix is not None) - fixable
    hint = f"{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` option"
    if fixable:
        text += f"\n[*] {fixable} fixable with the `--fix` option" + (f" ({hint})." if hidden else ".")
    elif hidden:
        text += f"\nNo fixes available ({hint})."
    return text


def _report(run: _Run, options: argparse.Namespace, stream: TextIO, *, colour: bool) -> None:
    def source_of(filename: str) -> str | None:
        if filename not in run.sources:
            path = Path(filename)
            try:
                if path.suffix == NOTEBOOK_SUFFIX:  # the cells, row for row as findings count them
                    run.sources[filename] = read_notebook_file(path)[0].display_source
                else:
                    run.sources[filename] = read_source(path)
            except (OSError, SyntaxError, UnicodeDecodeError, LookupError, NotebookError):
                return None
        return run.sources[filename]

    human = options.output_format in HUMAN_FORMATS
    if options.statistics:
        stream.write(statistics(run.findings, as_json=options.output_format == "json"))
    else:
        stream.write(WRITERS[options.output_format](run.findings, OutputContext(source_of, colour)))
    if options.show_fixes and human:
        stream.write(fix_listing(run.findings))
    if human and not options.quiet:
        stream.write(_summary(run, options) + "\n")


def _add_noqa(run: _Run) -> int:
    """As ruff: edit the files, say how many comments were added, exit 0 unless something failed."""
    by_file: dict[str, list[Finding]] = {}
    for finding in run.findings:
        if (
            finding.code is not None and finding.code != UNUSED_NOQA_CODE
        ):  # as ruff: never silence the unused-noqa report
            by_file.setdefault(finding.filename, []).append(finding)
    added = 0
    for filename, findings in by_file.items():
        try:
            added += add_noqa_to_file(Path(filename), findings)
        except (AddNoqaError, OSError) as error:
            sys.stderr.write(f"tensorlint: error: {escape(str(error))}\n")
            run.failed = True
    sys.stderr.write(f"Added {added} noqa directive{'s' if added != 1 else ''}.\n")
    return EXIT_ERROR if run.failed else EXIT_CLEAN


def _server() -> int:
    try:
        from tensorlint.server import main as serve
    except ImportError as error:  # pygls is an extra: the linter itself does not need it
        sys.stderr.write(f"tensorlint: error: the language server needs `pip install 'tensorlint[lsp]'` ({error})\n")
        return EXIT_ERROR
    return serve()


def _verify(args: list[str]) -> int:
    # Imported here: the runtime verifier is an extra, and `check` must stay free of it.
    from tensorlint.verify.cli import main as verify_main

    return verify_main(args)


def _rule(args: list[str]) -> int:
    parser = Parser(prog="tensorlint rule", description="Print a rule's documentation.")
    parser.add_argument("code", nargs="?", help="a rule code, e.g. TL001")
    parser.add_argument("--all", action="store_true", help="every rule")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    options = parser.parse_args(args)
    if options.all == (options.code is not None):
        parser.error("give one rule code, or --all")
    if options.all:
        rules = list(all_rules())
    else:
        rule = rule_by_code(options.code.upper())
        if rule is None:
            sys.stderr.write(f"tensorlint: error: unknown rule {options.code!r}; `tensorlint rules` lists them\n")
            return EXIT_ERROR
        rules = [rule]
    if options.output_format == "json":
        records = [rule_record(rule) for rule in rules]
        print(json.dumps(records if options.all else records[0], indent=2))
    else:
        sys.stdout.write("\n".join(rule.documentation() for rule in rules))
    return EXIT_CLEAN


def _rules(args: list[str]) -> int:
    parser = Parser(prog="tensorlint rules", description="List every rule: default state and fix availability.")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    if parser.parse_args(args).output_format == "json":
        print(json.dumps([rule_record(rule) for rule in all_rules()], indent=2))
    else:
        sys.stdout.write(render_table())
    return EXIT_CLEAN
