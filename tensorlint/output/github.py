"""GitHub Actions workflow commands: `::error title=...,file=...,line=...::message` per finding.

https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorlint.findings import Finding
from tensorlint.output.context import OutputContext, escape, severity


def escape_data(text: str) -> str:
    """The message part: `%`, CR and LF are percent-encoded (`%` first, so nothing is encoded twice)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value: also `:` and `,`, which would end the value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding, context: OutputContext) -> str:
    path = context.relative_path(finding.filename)
    title = f"tensorlint ({finding.code})" if finding.code else "tensorlint"
    properties = {
        "title": title,
        "file": path,
        "line": finding.file_location.row,  # in a notebook: the line of the .ipynb file GitHub shows
        "col": finding.file_location.column,
        "endLine": finding.file_end_location.row,
        "endColumn": finding.file_end_location.column,
    }
    joined = ",".join(f"{key}={escape_property(escape(str(value)))}" for key, value in properties.items())
    code = f"{finding.code} " if finding.code else ""
    location = f"{path}:{finding.position}:"
    message = escape_data(escape(f"{location} {code}{finding.message}"))
    return f"::{severity(finding)} {joined}::{message}"


def write(findings: Sequence[Finding], context: OutputContext) -> str:
    return "".join(annotation(f, context) + "\n" for f in findings)
