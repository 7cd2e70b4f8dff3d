"""`tensorlint verify PATH... | FILE::TARGET` (and `check --verify`): the static rules, then each
finding's code run and measured.

All the jobs of a file run in one subprocess (runner.py), one file after another; a file without
findings is never run. This process never imports torch.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensorlint.arguments import Parser
from tensorlint.config import ConfigError, ConfigFinder, find_pyproject, load_config, tool_tables
from tensorlint.engine import lint_file, read_source
from tensorlint.files import Missing, Skipped, discover
from tensorlint.findings import Finding
from tensorlint.notebook import NotPythonNotebook
from tensorlint.output import escape
from tensorlint.source import NOTEBOOK_SUFFIX
from tensorlint.verify.plan import Options, Plan, plan
from tensorlint.verify.runner import NO_TORCH, run_jobs
from tensorlint.verify.verdict import INCONCLUSIVE, VERDICTS, Verdict

EXIT_CLEAN, EXIT_LEAKS, EXIT_ERROR = 0, 1, 2
NO_TORCH_HELP = f"{NO_TORCH}; `tensorlint verify` runs your code under it: pip install 'tensorlint[verify]'"
SETTINGS = {"entry": str, "calls": int, "warmup": int, "timeout": (int, float), "device": str}


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="tensorlint verify",
        usage="tensorlint verify PATH... | FILE::NAME [options]\n"
        "       tensorlint verify --run SCRIPT [--steps N] [options] [-- ARGS]",
        description="Run the code behind each finding in a subprocess and measure the tensor memory it keeps.",
    )
    p.add_argument(
        "targets",
        nargs="*",
        metavar="PATH",
        help="files or folders (found as `check` finds them; only files with findings run), "
        "or one FILE::NAME (a class or function of the file)",
    )
    p.add_argument(
        "--run",
        metavar="SCRIPT",
        help="run a whole training script (with the ARGS after --) and watch it: a sample at every "
        "optimizer.step(), or every DataLoader batch where no optimizer steps",
    )
    p.add_argument("--steps", type=int, default=50, help="with --run: stop the script after N steps (default 50)")
    p.add_argument("--entry", help="what to call when a finding's own code cannot be driven: NAME or module:callable")
    p.add_argument("--input", action="append", dest="inputs", help="a forward input, e.g. float32[8,512] (repeat)")
    p.add_argument("--calls", type=int, help="measured calls (default 20)")
    p.add_argument("--warmup", type=int, help="warm-up calls before measuring (default 3)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), help="default auto: cuda when available")
    p.add_argument("--timeout", type=float, help="seconds per target (default 120; with --run, for the script: 600)")
    p.add_argument("--output-format", choices=("concise", "json"), default="concise")
    return p


@dataclass(frozen=True)
class _Verified:
    """One file's plans and the verdict of each; `name` is the FILE::NAME target, if any."""

    path: Path
    name: str
    plans: list[Plan]
    verdicts: list[Verdict]


def main(argv: Sequence[str]) -> int:
    argv = list(argv)
    script_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    options_part = argv[: argv.index("--")] if "--" in argv else argv
    args = parser().parse_args(options_part)
    if (args.run is None) == (not args.targets):
        parser().error("give PATH... or FILE::NAME, or --run SCRIPT")
    if script_args and args.run is None:
        parser().error("arguments after -- go to the script of --run")
    named = [target for target in args.targets if "::" in target]
    if named and len(args.targets) > 1:
        parser().error("FILE::NAME verifies one target of one file: give it alone")
    if not _torch_installed():
        sys.stderr.write(f"tensorlint: error: {NO_TORCH_HELP}\n")
        return EXIT_ERROR
    if args.run is not None:
        return _watch(args, script_args)
    file, _, name = named[0].partition("::") if named else ("", "", "")
    if named and not Path(file).is_file():
        sys.stderr.write(f"tensorlint: error: {file}: No such file\n")
        return EXIT_ERROR
    try:
        settings = _settings(find_pyproject(Path.cwd()))
        found, failed = _findings([Path(file)] if named else [Path(t) for t in args.targets])
    except ConfigError as error:
        sys.stderr.write(f"tensorlint: error: {error}\n")
        return EXIT_ERROR
    specs: dict[str, dict[str, Any]] = {k: v for k, v in settings.items() if isinstance(v, dict)}
    if args.inputs and name:
        key = f"{Path(file).as_posix()}::{name}"
        specs[key] = {**specs.get(key, {}), "inputs": args.inputs}
    options = Options(
        target=name or None,
        entry=args.entry or settings.get("entry"),
        specs=specs,
        calls=args.calls or int(settings.get("calls", 20)),
        warmup=args.warmup if args.warmup is not None else int(settings.get("warmup", 3)),
        device=args.device or str(settings.get("device", "auto")),
    )
    timeout = args.timeout or float(settings.get("timeout", 120))
    return _verify_and_report(found, name, options, timeout, args.output_format, failed)


def verify_findings(findings: Sequence[Finding], output_format: str) -> int:
    """`tensorlint check --verify`: check's findings, each file that has some verified as
    `tensorlint verify` does, with the settings of [tool.tensorlint.verify]."""
    if not _torch_installed():
        sys.stderr.write(f"tensorlint: error: {NO_TORCH_HELP}\n")
        return EXIT_ERROR
    settings = _settings(find_pyproject(Path.cwd()))
    found: dict[Path, list[Finding]] = {}
    for finding in findings:
        if finding.code:
            found.setdefault(Path(finding.filename), []).append(finding)
    options = Options(
        entry=settings.get("entry"),
        specs={k: v for k, v in settings.items() if isinstance(v, dict)},
        calls=int(settings.get("calls", 20)),
        warmup=int(settings.get("warmup", 3)),
        device=str(settings.get("device", "auto")),
    )
    return _verify_and_report(found, "", options, float(settings.get("timeout", 120)), output_format, False)


def _findings(paths: list[Path]) -> tuple[dict[Path, list[Finding]], bool]:
    """Each file's findings, the files found as `check` finds them (excludes, .gitignore, the
    nearest configuration); and whether a path was missing or could not be read."""
    configs = ConfigFinder.for_command_line(None, isolated=False)
    found: dict[Path, list[Finding]] = {}
    failed = False
    for item in discover(paths, configs):
        if isinstance(item, (Missing, Skipped)):
            why = "No such file or directory" if isinstance(item, Missing) else item.reason
            sys.stderr.write(f"tensorlint: error: {escape(str(item.path))}: {why}\n")
            failed = True
            continue
        try:
            found[item] = [f for f in lint_file(item, codes=configs(item).codes_for(item)) if f.code]
        except NotPythonNotebook:  # a notebook in another language: nothing to verify
            continue
    return found, failed


def _verify_and_report(
    found: dict[Path, list[Finding]], name: str, options: Options, timeout: float, output_format: str, failed: bool
) -> int:
    """Plan and run every file with findings (one subprocess each; a file without any costs no
    torch start), print the report; exit 2 on an error, else 1 when a verdict says it leaks."""
    results: list[_Verified] = []
    warnings: list[str] = []
    for path, findings in found.items():
        if not findings and not name:
            continue
        try:
            plans = _plans(path, findings, options)
        except (OSError, UnicodeDecodeError, SyntaxError) as error:
            sys.stderr.write(f"tensorlint: error: {escape(str(path))}: {error}\n")
            failed = True
            continue
        verdicts, said = _run_all(plans, timeout)
        if any(v.reason.startswith(NO_TORCH) for v in verdicts):
            sys.stderr.write(f"tensorlint: error: {NO_TORCH_HELP}\n")
            return EXIT_ERROR
        results.append(_Verified(path, name, plans, verdicts))
        warnings += [w for w in said if w not in warnings]
    if output_format == "json":
        sys.stdout.write(json.dumps(_records(results, warnings), indent=2) + "\n")
    else:
        sys.stdout.write(_text(results, warnings))
    if failed:
        return EXIT_ERROR
    return EXIT_LEAKS if any(v.leaks for r in results for v in r.verdicts) else EXIT_CLEAN


def _plans(path: Path, findings: list[Finding], options: Options) -> list[Plan]:
    if path.suffix == NOTEBOOK_SUFFIX:  # its cells are not a module that can be imported
        return [Plan(str(path), reason="notebooks are not run", findings=findings)]
    return plan(path, read_source(path), findings, options)


def _watch(args: argparse.Namespace, script_args: list[str]) -> int:
    """`--run SCRIPT`: the script runs with its output shown as it comes (on stderr with JSON
    output), then the report; exit 1 when its memory grows per step."""
    from tensorlint.verify import script_report

    path = Path(args.run)
    if not path.is_file():
        sys.stderr.write(f"tensorlint: error: {args.run}: No such file\n")
        return EXIT_ERROR
    try:
        pyproject = find_pyproject(Path.cwd())
        settings = _settings(pyproject)
        config = load_config(pyproject)
        source = read_source(path)
    except (ConfigError, OSError, UnicodeDecodeError, SyntaxError) as error:
        sys.stderr.write(f"tensorlint: error: {error}\n")
        return EXIT_ERROR
    if args.steps < (args.warmup if args.warmup is not None else 3) + 3:
        parser().error("--steps must leave at least 3 steps after the warm-up")
    findings = [f for f in lint_file(path, codes=config.codes_for(path)) if f.code]
    job = {
        "kind": "script",
        "file": str(path.resolve()),
        "args": script_args,
        "steps": args.steps,
        "warmup": args.warmup if args.warmup is not None else int(settings.get("warmup", 3)),
        "device": args.device or str(settings.get("device", "auto")),
        "cwd": str(Path.cwd()),
    }
    json_output = args.output_format == "json"
    sys.stdout.flush()
    run = run_jobs([job], args.timeout or 600.0, output="stderr" if json_output else "show")
    [verdict] = run.verdicts
    if verdict.reason.startswith(NO_TORCH):
        sys.stderr.write(f"tensorlint: error: {NO_TORCH_HELP}\n")
        return EXIT_ERROR
    found = script_report.growths(verdict, findings, source, path)
    if json_output:
        record = script_report.record(args.run, verdict, found, findings, run.warnings)
        sys.stdout.write(json.dumps(record, indent=2) + "\n")
    else:
        sys.stdout.write(script_report.text(args.run, verdict, found, findings, run.warnings))
    return EXIT_LEAKS if verdict.leaks else EXIT_CLEAN


def _torch_installed() -> bool:
    """Without importing it (this process never does)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def _settings(pyproject: Path | None) -> dict[str, Any]:
    """`[tool.tensorlint.verify]`: entry, calls, warmup, timeout, device, and "FILE::NAME" tables."""
    if pyproject is None:
        return {}
    tensorlint = tool_tables(pyproject).get("tensorlint", {})
    table = tensorlint.get("verify", {}) if isinstance(tensorlint, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject} [tool.tensorlint.verify]: must be a table")
    for key, value in table.items():
        expected = SETTINGS.get(key, dict) if "::" in key or key in SETTINGS else None
        if expected is None or not isinstance(value, expected):  # type: ignore[arg-type]
            raise ConfigError(
                f"{pyproject} [tool.tensorlint.verify]: bad key {key!r} "
                f'(known: {", ".join(SETTINGS)}, or a "FILE::NAME" table)'
            )
    return table


def _run_all(plans: list[Plan], timeout: float) -> tuple[list[Verdict], list[str]]:
    """Every plan's job in one subprocess for the file; a plan without a job keeps its reason."""
    jobs = [item.job for item in plans if item.job is not None]
    run = run_jobs(jobs, timeout) if jobs else None
    measured = iter(run.verdicts if run else [])
    verdicts = [
        next(measured) if item.job is not None else Verdict(INCONCLUSIVE, reason=item.reason, device="")
        for item in plans
    ]
    return verdicts, run.warnings if run else []


def _text(results: list[_Verified], warnings: list[str]) -> str:
    lines = []
    rows = [(f, p, v) for r in results for p, v in zip(r.plans, r.verdicts, strict=False) for f in p.findings]
    for finding, item, verdict in sorted(rows, key=lambda r: r[0].sort_key):
        head = f"{escape(finding.filename)}:{finding.location.row}:{finding.location.column}: {finding.code}"
        lines.append(f"{head} {escape(finding.message)}")
        lines.append(f"  runtime ({escape(item.label)}): {escape(verdict.describe())}")
    for result in results:
        for item, verdict in zip(result.plans, result.verdicts, strict=False):
            if not item.findings:
                lines.append(f"{escape(str(result.path))}::{escape(result.name)}: no static finding")
                lines.append(f"  runtime ({escape(item.label)}): {escape(verdict.describe())}")
    counts = {v: sum(1 for _, _, verdict in rows if verdict.verdict == v) for v in VERDICTS}
    summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    files = f" in {len(results)} files" if len(results) > 1 else ""
    lines.append(
        f"Verified {len(rows)} finding{'s' if len(rows) != 1 else ''}{files}" + (f": {summary}." if summary else ".")
    )
    if warnings:
        lines.append("")
        lines.append(f"Warnings from the verified code (not from tensorlint), {len(warnings)}:")
        lines += [f"  {escape(w)}" for w in warnings]
    return "\n".join(lines) + "\n"


def _records(results: list[_Verified], warnings: list[str]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for result in results:
        for item, verdict in zip(result.plans, result.verdicts, strict=False):
            base = {"target": item.label, "job": item.job, "runtime": verdict.to_json(), "code_warnings": warnings}
            if not item.findings:
                records.append({"code": None, "filename": str(result.path), "name": result.name, **base})
            for finding in item.findings:
                location = {"row": finding.location.row, "column": finding.location.column}
                records.append(
                    {"code": finding.code, "message": finding.message, "filename": finding.filename}
                    | {"location": location}
                    | base
                )
    return sorted(records, key=lambda r: (r["filename"], (r.get("location") or {}).get("row", 0)))
