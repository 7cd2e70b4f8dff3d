"""The formats for people: `concise` (one line per finding) and `full` (with the source line)."""

from __future__ import annotations

from collections.abc import Sequence

from tensorlint.findings import Applicability, Finding
from tensorlint.output.context import OutputContext, escape, rule_of

_STYLES = {"bold": "1", "red": "1;31", "cyan": "36", "blue": "1;34", "dim": "2"}


def paint(text: str, style: str, enabled: bool) -> str:
    return f"\x1b[{_STYLES[style]}m{text}\x1b[0m" if enabled else text


def fixable(finding: Finding) -> bool:
    """ruff's `[*]`: a fix that `--fix` applies without `--unsafe-fixes`."""
    return finding.fix is not None and finding.fix.applicability is Applicability.SAFE


def headline(finding: Finding, colour: bool = False) -> str:
    code = f"{paint(finding.code, 'red', colour)} " if finding.code else ""
    marker = f"{paint('[*]', 'cyan', colour)} " if fixable(finding) else ""
    where = f"{paint(escape(finding.filename), 'bold', colour)}:{finding.position}:"
    return f"{where} {code}{marker}{escape(finding.message)}"


def concise(findings: Sequence[Finding], context: OutputContext) -> str:
    return "".join(headline(f, context.colour) + "\n" for f in findings)


def full(findings: Sequence[Finding], context: OutputContext) -> str:
    blocks = []
    for finding in findings:
        block = [headline(finding, context.colour)]
        row = finding.location.row
        line = context.line(finding.filename, row)
        if line is not None:
            gutter = str(finding.cell.location.row if finding.cell else row)  # a notebook's rows count per cell
            line = line.expandtabs(1)
            width = (
                finding.end_location.column - finding.location.column
                if finding.end_location.row == row
                else len(line) - finding.location.column + 1
            )
            bar = paint("|", "blue", context.colour)
            carets = paint("^" * max(width, 1), "red", context.colour)
            block.append(f"{' ' * len(gutter)} {bar}")
            block.append(f"{paint(gutter, 'blue', context.colour)} {bar} {escape(line)}")
            block.append(f"{' ' * len(gutter)} {bar} {' ' * (finding.location.column - 1)}{carets}")
        if finding.fix is not None:
            block.append(f"  = fix ({finding.fix.applicability.value}): {escape(finding.fix.message)}")
        rule = rule_of(finding)
        if rule is not None:
            block.append(f"  = help: see {rule.url()}")
        blocks.append("\n".join(block) + "\n")
    return "\n".join(blocks)
