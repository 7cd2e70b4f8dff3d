"""The lines after the findings: the count, `--statistics`, and `--show-fixes`."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tensorlint.findings import Finding, applicable
from tensorlint.output.context import escape, rule_of
from tensorlint.output.text import fixable


def summary(findings: Sequence[Finding], fixed: int = 0) -> str:
    """ruff's count line: `(N fixed, M remaining)` only once `--fix` fixed something."""
    remaining = len(findings)
    total = remaining + fixed
    if total == 0:
        return "All checks passed!"
    counts = f" ({fixed} fixed, {remaining} remaining)" if fixed else ""
    return f"Found {total} error{'s' if total != 1 else ''}{counts}."


@dataclass(frozen=True)
class FixAdvice:
    """How the report tells the user to ask for fixes: flags on the command line, or, in the
    pre-commit hook (whose command line the user never types), the hook's `args:`."""

    unsafe: bool  # --unsafe-fixes was given: unsafe fixes count as applicable
    pre_commit: bool

    def ask(self, *flags: str) -> str:
        return f"`args: [{', '.join(flags)}]`" if self.pre_commit else f"`{' '.join(flags)}`"

    def ask_fix(self) -> str:
        # The hook's `args:` replace each other: keep the `--unsafe-fixes` the user already gave.
        return self.ask("--fix", "--unsafe-fixes") if self.pre_commit and self.unsafe else self.ask("--fix")

    @property
    def where(self) -> str:
        return " in the tensorlint hook of .pre-commit-config.yaml" if self.pre_commit else ""

    def split(self, findings: Sequence[Finding]) -> tuple[list[Finding], list[Finding]]:
        """The findings whose fix `--fix` applies now, and those whose unsafe fix it hides."""
        with_fix = [f for f in findings if f.fix is not None]
        shown = [f for f in with_fix if applicable(f, self.unsafe)]
        return shown, [f for f in with_fix if not applicable(f, self.unsafe)]

    def hidden(self, count: int) -> str:
        return f"{count} unsafe fix{'es' if count != 1 else ''} available with {self.ask('--fix', '--unsafe-fixes')}"

    def hint(self, findings: Sequence[Finding]) -> str | None:
        """ruff's line after the count (its 0.17 words), or None when no finding has a fix."""
        shown, hidden = self.split(findings)
        if shown:
            also = f" ({self.hidden(len(hidden))})" if hidden else ""
            return f"[*] {len(shown)} fixable with {self.ask_fix()}{also}{self.where}."
        return f"{self.hidden(len(hidden))}{self.where}." if hidden else None


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


def fix_listing(findings: Sequence[Finding], advice: FixAdvice) -> str:
    """`--show-fixes`: the fixes `--fix` would apply, then those it hides, in the closing line's words."""
    shown, hidden = advice.split(findings)
    if not shown and not hidden:
        return "No fixes available.\n"
    lines = []
    if shown:
        lines.append(
            f"{len(shown)} fix{'es' if len(shown) != 1 else ''} available with {advice.ask_fix()}{advice.where}:"
        )
        lines += [_listed(finding) for finding in shown]
    if hidden:
        lines.append(f"{advice.hidden(len(hidden))}{advice.where}:")
        lines += [_listed(finding) for finding in hidden]
    return "\n".join(lines) + "\n"


def _listed(finding: Finding) -> str:
    assert finding.fix is not None
    where = f"{escape(finding.filename)}:{finding.position}"
    return f"  {where}: {finding.code} {escape(finding.fix.message)} ({finding.fix.applicability.value})"
