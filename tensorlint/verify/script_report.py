"""The report of `tensorlint verify --run`: per step numbers, the verdict, and for each growing
holder the static finding it confirms, or "not found statically" (a miss of the rules). No torch.

A growth is matched to a finding through the allocation's user frames: a finding confirms it
when one of those frames lies in the function that holds the finding. A graph that grows on the
host only (HOST-ONLY) has no allocation; it is matched to a TL004 finding of the function whose
local roots it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensorlint.findings import Finding
from tensorlint.output import escape
from tensorlint.verify.verdict import CONFIRMED, HOST_ONLY, UNITS, Site, Verdict, fmt_bytes, short_site

ROWS = 12  # steps printed in the text report before the middle is elided (JSON has them all)
_LOCAL = re.compile(r"local `[^`]+` in (?P<function>[\w.<>]+)\(\)")


@dataclass(frozen=True)
class Growth:
    """One holder that grows: its per-step size, where its tensors were allocated, what it confirms."""

    holder: str
    per_step: float
    unit: str  # "B" or "nodes"
    sites: tuple[Site, ...]
    findings: tuple[Finding, ...]


def growths(verdict: Verdict, findings: list[Finding], source: str, script: Path) -> list[Growth]:
    calls = max(1, verdict.calls)
    found: list[Growth] = []
    scopes = _scopes(source, findings)
    if verdict.verdict == HOST_ONLY:
        for holder in verdict.holders:
            match = _LOCAL.search(holder.path)
            tl004 = [f for f in findings if f.code == "TL004"]
            mine = [f for f in tl004 if match is None or scopes[id(f)][0] == match["function"]]
            found.append(Growth(holder.path, verdict.graph_nodes_per_call, "nodes", (), tuple(mine or tl004)))
        return found
    if verdict.verdict != CONFIRMED:
        return found
    by_holder: dict[str, list[Site]] = {}
    for site in verdict.sites:
        if site.storages >= max(2, calls // 2):  # a storage from nearly every step: it grows
            by_holder.setdefault(site.holder, []).append(site)
    resolved = str(script.resolve())
    for path, sites in by_holder.items():
        mine = [f for f in findings if any(_inside(frame, scopes[id(f)], resolved) for s in sites for frame in s.stack)]
        per_step = sum(s.bytes for s in sites) / calls
        found.append(Growth(path, per_step, "B", tuple(sites), tuple(dict.fromkeys(mine))))
    # A graph reached through a holder that a finding explains is explained by it too.
    for index, growth in enumerate(found):
        if not growth.findings:
            for other in found:
                base = other.holder.split(" (", 1)[0]
                if other.findings and other is not growth and base and base in growth.holder:
                    found[index] = Growth(growth.holder, growth.per_step, growth.unit, growth.sites, other.findings)
                    break
    return sorted(found, key=lambda g: -g.per_step)


def _scopes(source: str, findings: list[Finding]) -> dict[int, tuple[str, int, int]]:
    """For each finding, the innermost function around it: (name, first line, last line)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    scopes = {}
    for finding in findings:
        row = finding.location.row
        around = [f for f in functions if f.lineno <= row <= (f.end_lineno or f.lineno)]
        inner = max(around, key=lambda f: f.lineno, default=None)
        scopes[id(finding)] = (
            (inner.name, inner.lineno, inner.end_lineno or inner.lineno) if inner else ("<module>", 1, 10**9)
        )
    return scopes


def _inside(frame: str, scope: tuple[str, int, int], script: str) -> bool:
    location, _, function = frame.partition(" ")
    file, _, line = location.rpartition(":")
    if file != script or not line.isdigit():
        return False
    name, first, last = scope
    return function == name and first <= int(line) <= last


def text(script: str, verdict: Verdict, found: list[Growth], findings: list[Finding], warnings: list[str]) -> str:
    unit = UNITS.get(verdict.mode, "step")
    lines = [f"tensorlint verify --run {escape(script)}: {escape(verdict.ending or 'the script ended')}"]
    lines += _table(verdict, unit)
    lines.append(f"  {escape(verdict.describe())}")
    explained: set[int] = set()
    for growth in found:
        size = f"+{fmt_bytes(growth.per_step)}" if growth.unit == "B" else f"+{growth.per_step:g} autograd nodes"
        lines.append(f"  growing: {escape(growth.holder)}: {size} per {unit}")
        for site in growth.sites[:3]:
            lines.append(f"    allocated at {escape(short_site(site.site))} ({site.op}, {site.shape})")
        for finding in growth.findings:
            explained.add(id(finding))
            lines.append(f"    confirms {finding.code} at {escape(_where(finding))}")
        if not growth.findings:
            lines.append("    not found statically: no finding of tensorlint points here (a miss to report)")
    quiet = [f for f in findings if id(f) not in explained]
    if quiet:
        lines.append(f"  static findings not seen growing in this run ({len(quiet)}):")
        lines += [f"    {finding.code} at {escape(_where(finding))}" for finding in quiet]
    if warnings:
        lines.append(f"Warnings from the script (not from tensorlint), {len(warnings)}:")
        lines += [f"  {escape(w)}" for w in warnings]
    return "\n".join(lines) + "\n"


def _table(verdict: Verdict, unit: str) -> list[str]:
    series = verdict.series
    rows = list(zip(series.get("bytes", []), series.get("tensors", []), series.get("nodes", []), strict=False))
    if not rows:
        return []
    lines = [f"  {unit:>6}  {'live tensor memory':>18}  {'live tensors':>12}  {'autograd nodes':>14}"]
    shown = list(enumerate(rows))
    if len(shown) > ROWS:
        shown = [*shown[: ROWS - 4], (-1, (0, 0, 0)), *shown[-3:]]
    for index, (size, tensors, nodes) in shown:
        if index < 0:
            lines.append(f"  {'...':>6}")
            continue
        lines.append(f"  {verdict.warmup + index:>6}  {fmt_bytes(size):>18}  {tensors:>12}  {nodes:>14}")
    return lines


def _where(finding: Finding) -> str:
    return f"{finding.filename}:{finding.location.row}:{finding.location.column}"


def record(
    script: str, verdict: Verdict, found: list[Growth], findings: list[Finding], warnings: list[str]
) -> dict[str, Any]:
    return {
        "script": script,
        "ending": verdict.ending,
        "runtime": verdict.to_json(),
        "growing": [
            {
                "holder": g.holder,
                "per_step": g.per_step,
                "unit": g.unit,
                "sites": [s.site for s in g.sites],
                "confirms": [{"code": f.code, "filename": f.filename, "row": f.location.row} for f in g.findings],
                "found_statically": bool(g.findings),
            }
            for g in found
        ],
        "code_warnings": warnings,
    }
