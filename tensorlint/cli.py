"""The command line: `tensorlint [check] PATH...`, `verify FILE`, `rule CODE`, `rules`, `server`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tensorlint import __version__
from tensorlint.arguments import COMMANDS, Parser, overview
from tensorlint.cache import ResultCache, default_cache_dir
from tensorlint.config import Config, ConfigError, ConfigFinder, expand, validate_selectors
from tensorlint.files import Missing, Skipped, discover
from tensorlint.findings import Finding
from tensorlint.output import FORMATS, escape, use_colour
from tensorlint.report import ReportOptions, Run, write_report
from tensorlint.rules import all_rules, rule_by_code
from tensorlint.runner import Task, check_files, default_jobs
from tensorlint.source import NOTEBOOK_SUFFIX, UNUSED_NOQA_CODE
from tensorlint.time_limit import DEFAULT_SECONDS

# What only some commands and options use is imported where it is used: start-up is most of the
# time of a pre-commit run, which checks a few files.
if TYPE_CHECKING:
    from tensorlint.fixing import FixOptions

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_BROKEN_PIPE = 128 + 13  # what a shell reports for a process that SIGPIPE ended


def _check_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tensorlint check",
        description=COMMANDS["check"] + ".",
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
    # Given by the hook's entry in .pre-commit-hooks.yaml, not by people: a hook user cannot pass
    # flags, so the hints name the hook's `args:` instead.
    reporting.add_argument("--pre-commit", action="store_true", help=argparse.SUPPRESS)

    fixing = parser.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply fixes (safe ones; unsafe too with --unsafe-fixes)")
    fixing.add_argument("--unsafe-fixes", action="store_true", help="include fixes that may change behaviour")
    fixing.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    fixing.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when anything was fixed")

    runtime = parser.add_argument_group("runtime")
    runtime.add_argument(
        "--verify",
        action="store_true",
        help="run the code behind each finding and print its runtime verdict under it, as `tensorlint verify` "
        "does (needs tensorlint[verify]); only files with findings run",
    )

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
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`tensorlint src | head -1`): stop quietly, as a process that
        # SIGPIPE ends would, and keep the interpreter's last flush from raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("--version", "-V"):
        print(f"tensorlint {__version__}")
        return EXIT_CLEAN
    if args and args[0] in ("--help", "-h"):  # `tensorlint check --help` has the options for checking
        sys.stdout.write(overview())
        return EXIT_CLEAN
    if args and args[0] in HANDLERS:
        return HANDLERS[args[0]](args[1:])
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


@dataclass(frozen=True)
class _Selection:
    """The command line's selectors, applied on top of each file's configuration."""

    select: tuple[str, ...] | None
    extend_select: tuple[str, ...]
    ignore: tuple[str, ...]

    @classmethod
    def from_flags(cls, select: str | None, extend_select: str | None, ignore: str | None) -> _Selection:
        def selectors(value: str | None, flag: str) -> tuple[str, ...]:
            return validate_selectors(value.split(","), flag) if value else ()

        return cls(
            select=selectors(select, "--select") if select else None,
            extend_select=selectors(extend_select, "--extend-select"),
            ignore=selectors(ignore, "--ignore"),
        )

    def codes(self, config: Config, path: Path | None) -> frozenset[str]:
        """As in ruff: --select replaces the configured selection; extend-select and ignores of both kinds apply."""
        if self.select is not None:
            config = dataclasses.replace(config, select=self.select)
        return (config.codes_for(path) | expand(self.extend_select)) - expand(self.ignore)


@dataclass(frozen=True)
class _Files:
    """Which files `check` reads, and how: stdin's name, excludes, the time limit, jobs, the cache."""

    stdin_filename: str | None
    force_exclude: bool
    timeout: float | None  # seconds per file; None: no limit
    jobs: int  # 0: all cores
    cache_dir: Path | None  # None: the default place
    no_cache: bool


def _check(args: argparse.Namespace) -> int:
    """Read the flags once, into typed options; then lint (or fix) and report."""
    paths: list[Path] = args.paths or [Path(".")]
    configs = ConfigFinder.for_command_line(args.config, args.isolated)
    selection = _Selection.from_flags(args.select, args.extend_select, args.ignore)
    files = _Files(
        args.stdin_filename, args.force_exclude, args.timeout or None, args.jobs, args.cache_dir, args.no_cache
    )
    fixing = None
    if args.fix or args.diff:
        from tensorlint.fixing import FixOptions  # here: only --fix and --diff need it

        fixing = FixOptions(diff=args.diff, unsafe=args.unsafe_fixes)
    report = ReportOptions(
        output_format=args.output_format,
        statistics=args.statistics,
        show_fixes=args.show_fixes,
        quiet=args.quiet,
        fix=args.fix,
        unsafe_fixes=args.unsafe_fixes,
        pre_commit=args.pre_commit,
    )
    if args.add_noqa and any(str(path) == "-" for path in paths):
        raise ConfigError("--add-noqa cannot edit source read from stdin")
    if args.verify and (fixing or args.add_noqa or args.statistics or any(str(path) == "-" for path in paths)):
        raise ConfigError("--verify runs files: it goes with neither stdin, --fix, --diff, --add-noqa nor --statistics")
    if args.verify and args.output_format not in ("concise", "json"):
        raise ConfigError("--verify prints the verifier's report: --output-format concise or json")
    run = _lint(paths, configs, selection, files, fixing)
    if args.verify:
        return _verify_findings(run, args.output_format)
    if args.add_noqa:
        return _add_noqa(run)
    if args.diff:  # as ruff: the diff is the report; exit 1 when there is one
        if not args.quiet:
            sys.stderr.write(f"Would fix {run.fixed} error{'s' if run.fixed != 1 else ''}.\n")
        return EXIT_ERROR if run.failed else (EXIT_FINDINGS if run.diffs else EXIT_CLEAN)
    fixed_stdin = args.fix and any(str(path) == "-" for path in paths)
    if args.output_file is not None:
        with args.output_file.open("w", encoding="utf-8") as stream:
            write_report(run, report, stream, colour=False)
    else:
        stream = sys.stderr if fixed_stdin else sys.stdout  # stdout carries the fixed source
        write_report(run, report, stream, colour=use_colour(stream))
    if run.failed:
        return EXIT_ERROR
    if (run.findings and not args.exit_zero) or (run.fixed and args.exit_non_zero_on_fix):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _lint(
    paths: list[Path], configs: ConfigFinder, selection: _Selection, files: _Files, fixing: FixOptions | None
) -> Run:
    run = Run()
    if any(str(path) == "-" for path in paths):
        name = files.stdin_filename or "-"
        source = sys.stdin.read()
        run.sources[name] = source
        stdin_path = Path(name) if files.stdin_filename else None
        config = configs(stdin_path) if stdin_path else configs.fallback
        codes = selection.codes(config, stdin_path)
        if fixing is not None:
            from tensorlint.fixing import fix_stdin  # here: see _check

            fix_stdin(run, source, name, codes, fixing)
        elif name.endswith(NOTEBOOK_SUFFIX):
            _lint_stdin_notebook(run, source, name, codes)
        else:
            from tensorlint.engine import lint_source  # here: a cached run of files never imports LibCST

            run.findings.extend(lint_source(source, name, codes=codes))
    named = [path for path in paths if str(path) != "-"]
    tasks = []
    for item in discover(named, configs, force_exclude=files.force_exclude) if named else ():
        if isinstance(item, Missing):
            sys.stderr.write(f"tensorlint: error: {escape(str(item.path))}: No such file or directory\n")
            run.failed = True
        elif isinstance(item, Skipped):
            run.skipped(escape(str(item.path)), item.reason)
        else:
            tasks.append(Task(item, selection.codes(configs(item), item), files.timeout))
    if fixing is not None:
        from tensorlint.fixing import fix_files  # here: see _check

        fix_files(run, tasks, fixing)
    else:
        cache = None if files.no_cache else ResultCache(files.cache_dir or default_cache_dir(configs.fallback.root))
        for checked in check_files(tasks, jobs=files.jobs or default_jobs(), cache=cache):
            if checked.error is not None:
                run.internal_error(checked.path, checked.error)
            if checked.skipped is not None:
                run.skipped(escape(str(checked.path)), escape(checked.skipped))
            run.findings.extend(checked.findings)
    run.findings.sort(key=lambda f: f.sort_key)
    return run


def _lint_stdin_notebook(run: Run, text: str, name: str, codes: frozenset[str]) -> None:
    from tensorlint.engine import lint_notebook  # here: a cached run of files never imports LibCST
    from tensorlint.notebook import NotebookError, NotPythonNotebook, read_notebook  # and only notebooks need this

    try:
        notebook = read_notebook(text)
    except NotPythonNotebook as error:
        run.skipped(escape(name), str(error))
        return
    except NotebookError as error:
        run.unreadable_notebook(name, error)
        return
    run.sources[name] = notebook.display_source
    run.findings.extend(lint_notebook(notebook, name, codes=codes))


def _add_noqa(run: Run) -> int:
    """As ruff: edit the files, say how many comments were added, exit 0 unless something failed."""
    from tensorlint.add_noqa import AddNoqaError, add_noqa_to_file  # here: only --add-noqa needs it

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


def _server(args: list[str]) -> int:
    parser = Parser(prog="tensorlint server", description=COMMANDS["server"] + ".")
    # Language clients (vscode-languageclient among them) pass --stdio; it is the only transport.
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin and stdout (the default)")
    parser.parse_args(args)  # --help prints and exits here, before anything starts
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


def _verify_findings(run: Run, output_format: str) -> int:
    """`check --verify`: what check found, each file with findings then run as `verify` runs it."""
    from tensorlint.verify.cli import verify_findings

    code = verify_findings(run.findings, output_format)
    return EXIT_ERROR if run.failed else code


def _rule(args: list[str]) -> int:
    parser = Parser(prog="tensorlint rule", description=COMMANDS["rule"] + ".")
    parser.add_argument("code", nargs="?", help="a rule code, e.g. TL001")
    parser.add_argument("--all", action="store_true", help="every rule")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    options = parser.parse_args(args)
    from tensorlint.docs import rule_record  # here: only the rule commands need it

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
    parser = Parser(prog="tensorlint rules", description=COMMANDS["rules"] + ".")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    from tensorlint.docs import render_table, rule_record  # here: see _rule

    if parser.parse_args(args).output_format == "json":
        print(json.dumps([rule_record(rule) for rule in all_rules()], indent=2))
    else:
        sys.stdout.write(render_table())
    return EXIT_CLEAN


# The commands other than `check`, which is also the default; `tensorlint --help` lists them from COMMANDS.
HANDLERS: dict[str, Callable[[list[str]], int]] = {
    "verify": _verify,
    "rule": _rule,
    "rules": _rules,
    "server": _server,
    "lsp": _server,
}
