"""The lines after the findings: the count, `--statistics`, and `--show-fixes`."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from tensorlint.findings import Finding
from tensorlint.output.context import escape, rule_of
from tensorlint.output.text import fixable


def summary(findings: Sequence[Finding]) -> str:
    count = len(findings)
    if count == 0:
        return "All checks passed!"
    return f"Found {count} error{'s' if count != 1 else ''}."


def _statistics_rows(findings: Sequence[Finding]) -> list[dict[str, object]]:
    counts = Counter(f.code for f in findings)
    rows: list[dict[str, object]] = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0] or "")):
        in_code = [f for f in findings if f.code == code]
        rule = rule_of(in_code[0])
        rows.append(
            {
                "code": code,
                "name": rule.name if rule else "file-not-checked",
                "count": count,
                "fixable": any(fixable(f) for f in in_code),
            }
        )
    return rows


def statistics(findings: Sequence[Finding], as_json: bool = False) -> str:
    """ruff's `--statistics`: one row per code, most frequent first, `[*]` where `--fix` would fix."""
    rows = _statistics_rows(findings)
    if as_json:
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(row["count"])) for row in rows), default=1)
    return "".join(
        f"{row['count']:>{width}}\t{row['code'] or '-'}\t{'[*] ' if row['fixable'] else ''}{row['name']}\n"
        for row in rows
    )


def fix_listing(findings: Sequence[Finding]) -> str:
    """`--show-fixes`: each finding's available fix, grouped by file; or that there is none."""
    with_fix = [f for f in findings if f.fix is not None]
    if not with_fix:
        return "No fixes available.\n"
    lines = [f"{len(with_fix)} fix{'es' if len(with_fix) != 1 else ''} available:"]
    for finding in with_fix:
        assert finding.fix is not None
        where = f"{escape(finding.filename)}:{finding.position}"
        lines.append(f"  {where}: {finding.code} {escape(finding.fix.message)} ({finding.fix.applicability.value})")
    return "\n".join(lines) + "\n"
