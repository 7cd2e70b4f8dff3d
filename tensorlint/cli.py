"""The command line: `tensorlint [check] PATH...`, `tensorlint verify FILE`, `tensorlint rule CODE`, `tensorlint rules`."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

from tensorlint import __version__
from tensorlint.config import Config, ConfigError, expand, find_pyproject, load_config, validate_selectors
from tensorlint.engine import lint_file, lint_source, read_source
from tensorlint.files import Missing, discover
from tensorlint.findings import Finding
from tensorlint.output import FORMATS, WRITERS, summary
from tensorlint.rules import all_rules, rule_by_code

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
COMMANDS = ("check", "verify", "rule", "rules")


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
    if args and args[0] == "verify":
        return _verify(args[1:])
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
    findings: list[Finding] = []
    sources: dict[str, str] = {}
    failed = False
    if any(str(path) == "-" for path in paths):
        name = options.stdin_filename or "-"
        source = sys.stdin.read()
        sources[name] = source
        codes = _codes(config, select, ignore, Path(name) if options.stdin_filename else None)
        findings.extend(lint_source(source, name, codes=codes))
    files = [path for path in paths if str(path) != "-"]
    if files:
        for item in discover(files, config, force_exclude=options.force_exclude):
            if isinstance(item, Missing):
                sys.stderr.write(f"tensorlint: error: {item.path}: No such file or directory\n")
                failed = True
                continue
            try:
                findings.extend(lint_file(item, codes=_codes(config, select, ignore, item)))
            except Exception as error:
                sys.stderr.write(f"tensorlint: internal error while checking {item}: {type(error).__name__}: {error}\n")
                failed = True
    findings.sort(key=lambda f: f.sort_key)

    def source_of(filename: str) -> str | None:
        if filename not in sources:
            try:
                sources[filename] = read_source(Path(filename))
            except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
                return None
        return sources[filename]

    sys.stdout.write(WRITERS[options.output_format](findings, source_of))
    if options.output_format != "json" and not options.quiet:
        print(summary(findings))
    if failed:
        return EXIT_ERROR
    if findings and not options.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _codes(
    config: Config, select: tuple[str, ...] | None, ignore: tuple[str, ...], path: Path | None
) -> frozenset[str]:
    """As in ruff: --select replaces the configured selection; ignores of both kinds still apply."""
    if select is not None:
        config = dataclasses.replace(config, select=select)
    return config.codes_for(path) - expand(ignore)


def _verify(args: list[str]) -> int:
    # Imported here: the runtime verifier is an extra, and `check` must stay free of it.
    from tensorlint.verify.cli import main as verify_main

    return verify_main(args)


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
