"""The command line: `tensorlint [check] PATH...`, `tensorlint rule CODE`, `tensorlint rules`."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import sys
from collections.abc import Sequence
from pathlib import Path

from tensorlint import __version__
from tensorlint.config import Config, ConfigError, expand, find_pyproject, load_config, validate_selectors
from tensorlint.engine import lint_file, lint_source, read_source, read_source_and_encoding
from tensorlint.files import Missing, discover
from tensorlint.findings import Finding
from tensorlint.fixes import FixResult, applicable, fix_source, write_atomically
from tensorlint.output import FORMATS, WRITERS, summary
from tensorlint.rules import all_rules, rule_by_code

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
COMMANDS = ("check", "rule", "rules")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"tensorlint: error: {message}\n")
        raise SystemExit(EXIT_ERROR)


def _check_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tensorlint check",
        description="Find PyTorch memory-leak patterns before the code runs.",
    )
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders to check ('-' reads stdin); default: .")
    parser.add_argument("--select", help="comma-separated codes or prefixes to enable (e.g. TL001,TL00)")
    parser.add_argument("--ignore", help="comma-separated codes or prefixes to disable")
    parser.add_argument("--output-format", choices=FORMATS, default="concise")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    parser.add_argument("--stdin-filename", help="the name to report for source read from stdin")
    parser.add_argument("--force-exclude", action="store_true", help="apply excludes to files named explicitly")
    parser.add_argument("--fix", action="store_true", help="apply fixes (safe ones; unsafe too with --unsafe-fixes)")
    parser.add_argument("--unsafe-fixes", action="store_true", help="include fixes that may change behaviour")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    parser.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when anything was fixed")
    parser.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    parser.add_argument("--version", action="version", version=f"tensorlint {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("--version", "-V"):
        print(f"tensorlint {__version__}")
        return EXIT_CLEAN
    if args and args[0] == "rule":
        return _rule(args[1:])
    if args and args[0] == "rules":
        return _rules()
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


def _check(options: argparse.Namespace) -> int:
    paths: list[Path] = options.paths or [Path(".")]
    config = load_config(find_pyproject(Path.cwd()))
    select = validate_selectors(options.select.split(","), "--select") if options.select else None
    ignore = validate_selectors(options.ignore.split(","), "--ignore") if options.ignore else ()
    run = _Run(options)
    if any(str(path) == "-" for path in paths):
        name = options.stdin_filename or "-"
        run.stdin(
            sys.stdin.read(), name, _codes(config, select, ignore, Path(name) if options.stdin_filename else None)
        )
    for item in discover([p for p in paths if str(p) != "-"], config, force_exclude=options.force_exclude):
        if isinstance(item, Missing):
            sys.stderr.write(f"tensorlint: error: {item.path}: No such file or directory\n")
            run.failed = True
            continue
        try:
            run.file(item, _codes(config, select, ignore, item))
        except Exception as error:
            sys.stderr.write(f"tensorlint: internal error while checking {item}: {type(error).__name__}: {error}\n")
            run.failed = True
    return run.finish()


class _Run:
    """One `check` run: lints (and, when asked, fixes) each source, then reports."""

    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.fixing = bool(options.fix or options.diff)
        self.unsafe = bool(options.unsafe_fixes)
        self.findings: list[Finding] = []
        self.fixed = 0
        self.diffs = 0
        self.failed = False
        self.sources: dict[str, str] = {}

    def stdin(self, source: str, name: str, codes: frozenset[str]) -> None:
        self.sources[name] = source
        if not self.fixing:
            self.findings.extend(lint_source(source, name, codes=codes))
            return
        result = fix_source(source, name, codes=codes, unsafe=self.unsafe)
        self._fixed(result, name, source)
        if self.options.fix:
            sys.stdout.write(result.source)  # as ruff does: the fixed text replaces the input

    def file(self, path: Path, codes: frozenset[str]) -> None:
        if not self.fixing:
            self.findings.extend(lint_file(path, codes=codes))
            return
        try:
            source, encoding = read_source_and_encoding(path)
        except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
            self.findings.extend(lint_file(path, codes=codes))  # reports why it cannot be read
            return
        result = fix_source(source, str(path), codes=codes, unsafe=self.unsafe)
        self._fixed(result, str(path), source)
        if self.options.fix and not self.options.diff and result.source != source:
            write_atomically(path, result.source, encoding)

    def _fixed(self, result: FixResult, name: str, source: str) -> None:
        if result.refused:
            sys.stderr.write(f"tensorlint: error: {name}: fixes not applied: {result.refused}\n")
            self.failed = True
        self.fixed += len(result.fixed)
        self.findings.extend(result.remaining)
        self.sources[name] = result.source
        if self.options.diff and result.source != source:
            self.diffs += 1
            sys.stdout.writelines(
                difflib.unified_diff(
                    source.splitlines(keepends=True), result.source.splitlines(keepends=True), name, name
                )
            )

    def finish(self) -> int:
        options = self.options
        self.findings.sort(key=lambda f: f.sort_key)
        if options.diff:
            if not options.quiet:
                sys.stderr.write(f"Would fix {self.fixed} error{'s' if self.fixed != 1 else ''}.\n")
            return EXIT_ERROR if self.failed else (EXIT_FINDINGS if self.diffs else EXIT_CLEAN)
        out = sys.stderr if options.fix and any(str(p) == "-" for p in options.paths) else sys.stdout
        out.write(WRITERS[options.output_format](self.findings, self._source_of))
        if options.output_format != "json" and not options.quiet:
            out.write(self._summary() + "\n")
        if self.failed:
            return EXIT_ERROR
        if (self.findings and not options.exit_zero) or (self.fixed and options.exit_non_zero_on_fix):
            return EXIT_FINDINGS
        return EXIT_CLEAN

    def _summary(self) -> str:
        if self.options.fix:
            total = len(self.findings) + self.fixed
            if total == 0:
                return summary([])
            return (
                f"Found {total} error{'s' if total != 1 else ''} ({self.fixed} fixed, {len(self.findings)} remaining)."
            )
        text = summary(self.findings)
        fixable = sum(1 for f in self.findings if applicable(f, self.unsafe))
        hidden = sum(1 for f in self.findings if f.fix is not None) - fixable
        hint = f"{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` option"
        if fixable:
            text += f"\n[*] {fixable} fixable with the `--fix` option" + (f" ({hint})." if hidden else ".")
        elif hidden:
            text += f"\nNo fixes available ({hint})."
        return text

    def _source_of(self, filename: str) -> str | None:
        if filename not in self.sources:
            try:
                self.sources[filename] = read_source(Path(filename))
            except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
                return None
        return self.sources[filename]


def _codes(
    config: Config, select: tuple[str, ...] | None, ignore: tuple[str, ...], path: Path | None
) -> frozenset[str]:
    """As in ruff: --select replaces the configured selection; ignores of both kinds still apply."""
    if select is not None:
        config = dataclasses.replace(config, select=select)
    return config.codes_for(path) - expand(ignore)


def _server() -> int:
    try:
        from tensorlint.server import main as serve
    except ImportError as error:  # pygls is an extra: the linter itself does not need it
        sys.stderr.write(f"tensorlint: error: the language server needs `pip install 'tensorlint[lsp]'` ({error})\n")
        return EXIT_ERROR
    return serve()


def _rule(args: list[str]) -> int:
    if len(args) != 1:
        sys.stderr.write("tensorlint: error: usage: tensorlint rule CODE\n")
        return EXIT_ERROR
    rule = rule_by_code(args[0].upper())
    if rule is None:
        sys.stderr.write(f"tensorlint: error: unknown rule {args[0]!r}; `tensorlint rules` lists them\n")
        return EXIT_ERROR
    sys.stdout.write(rule.documentation())
    return EXIT_CLEAN


def _rules() -> int:
    for rule in all_rules():
        print(f"{rule.code}  {rule.name:<28} {rule.summary}")
    return EXIT_CLEAN
