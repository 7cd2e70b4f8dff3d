"""`tensorlint verify FILE[::TARGET]`: the static rules, then each finding's code run and measured.

All the jobs of the file run in one subprocess (runner.py); this process never imports torch.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tensorlint.arguments import Parser
from tensorlint.config import ConfigError, find_pyproject, load_config, tool_tables
from tensorlint.engine import lint_file, read_source
from tensorlint.output import escape
from tensorlint.verify.plan import Options, Plan, plan
from tensorlint.verify.runner import NO_TORCH, run_jobs
from tensorlint.verify.verdict import INCONCLUSIVE, VERDICTS, Verdict

EXIT_CLEAN, EXIT_LEAKS, EXIT_ERROR = 0, 1, 2
NO_TORCH_HELP = f"{NO_TORCH}; `tensorlint verify` runs your code under it: pip install 'tensorlint[verify]'"
SETTINGS = {"entry": str, "calls": int, "warmup": int, "timeout": (int, float), "device": str}


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="tensorlint verify",
        usage="tensorlint verify FILE[::NAME] [options]\n       tensorlint verify --run SCRIPT [--steps N] [options] [-- ARGS]",
        description="Run the code behind each finding in a subprocess and measure the tensor memory it keeps.",
    )
    p.add_argument("target", nargs="?", help="FILE or FILE::NAME (a class or function of the file)")
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


def main(argv: Sequence[str]) -> int:
    argv = list(argv)
    script_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    options_part = argv[: argv.index("--")] if "--" in argv else argv
    args = parser().parse_args(options_part)
    if (args.run is None) == (args.target is None):
        parser().error("give FILE[::NAME], or --run SCRIPT")
    if script_args and args.run is None:
        parser().error("arguments after -- go to the script of --run")
    if not _torch_installed():
        sys.stderr.write(f"tensorlint: error: {NO_TORCH_HELP}\n")
        return EXIT_ERROR
    if args.run is not None:
        return _watch(args, script_args)
    file, _, name = args.target.partition("::")
    path = Path(file)
    if not path.is_file():
        sys.stderr.write(f"tensorlint: error: {file}: No such file\n")
        return EXIT_ERROR
    try:
        pyproject = find_pyproject(Path.cwd())
        settings = _settings(pyproject)
        config = load_config(pyproject)
        source = read_source(path)
    except (ConfigError, OSError, UnicodeDecodeError, SyntaxError) as error:
        sys.stderr.write(f"tensorlint: error: {error}\n")
        return EXIT_ERROR
    specs: dict[str, dict[str, Any]] = {k: v for k, v in settings.items() if isinstance(v, dict)}
    if args.inputs and name:
        specs[f"{path.as_posix()}::{name}"] = {**specs.get(f"{path.as_posix()}::{name}", {}), "inputs": args.inputs}
    options = Options(
        target=name or None,
        entry=args.entry or settings.get("entry"),
        specs=specs,
        calls=args.calls or int(settings.get("calls", 20)),
        warmup=args.warmup if args.warmup is not None else int(settings.get("warmup", 3)),
        device=args.device or str(settings.get("device", "auto")),
    )
    timeout = args.timeout or float(settings.get("timeout", 120))
    findings = [f for f in lint_file(path, codes=config.codes_for(path)) if f.code]
    try:
        plans = plan(path, source, findings, options)
    except SyntaxError as error:
        sys.stderr.write(f"tensorlint: error: {path}: {error}\n")
        return EXIT_ERROR
    verdicts, warnings = _run_all(plans, timeout)
    if any(v.reason.startswith(NO_TORCH) for v in verdicts):
        sys.stderr.write(f"tensorlint: error: {NO_TORCH_HELP}\n")
        return EXIT_ERROR
    if args.output_format == "json":
        sys.stdout.write(json.dumps(_records(path, name, plans, verdicts, warnings), indent=2) + "\n")
    else:
        sys.stdout.write(_text(path, name, plans, verdicts, warnings))
    return EXIT_LEAKS if any(v.leaks for v in verdicts) else EXIT_CLEAN


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


def _text(path: Path, name: str, plans: list[Plan], verdicts: list[Verdict], warnings: list[str]) -> str:
    lines = []
    rows = [(f, p, v) for p, v in zip(plans, verdicts, strict=False) for f in p.findings]
    for finding, item, verdict in sorted(rows, key=lambda r: r[0].sort_key):
        head = f"{escape(finding.filename)}:{finding.location.row}:{finding.location.column}: {finding.code}"
        lines.append(f"{head} {escape(finding.message)}")
        lines.append(f"  runtime ({escape(item.label)}): {escape(verdict.describe())}")
    for item, verdict in zip(plans, verdicts, strict=False):
        if not item.findings:
            lines.append(f"{escape(str(path))}::{escape(name)}: no static finding")
            lines.append(f"  runtime ({escape(item.label)}): {escape(verdict.describe())}")
    counts = {v: sum(1 for _, _, verdict in rows if verdict.verdict == v) for v in VERDICTS}
    summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    lines.append(f"Verified {len(rows)} finding{'s' if len(rows) != 1 else ''}" + (f": {summary}." if summary else "."))
    if warnings:
        lines.append("")
        lines.append(f"Warnings from the verified code (not from tensorlint), {len(warnings)}:")
        lines += [f"  {escape(w)}" for w in warnings]
    return "\n".join(lines) + "\n"


def _records(
    path: Path, name: str, plans: list[Plan], verdicts: list[Verdict], warnings: list[str]
) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for item, verdict in zip(plans, verdicts, strict=False):
        base = {"target": item.label, "job": item.job, "runtime": verdict.to_json(), "code_warnings": warnings}
        if not item.findings:
            records.append({"code": None, "filename": str(path), "name": name, **base})
        for finding in item.findings:
            location = {"row": finding.location.row, "column": finding.location.column}
            records.append(
                {"code": finding.code, "message": finding.message, "filename": finding.filename, "location": location}
                | base
            )
    return sorted(records, key=lambda r: (r.get("location") or {}).get("row", 0))
