"""SARIF 2.1.0, with what GitHub code scanning reads: rule help and URL, relative URIs, fingerprints.

https://docs.github.com/en/code-security/reference/code-scanning/sarif-files/sarif-support
A file that could not be checked is not a rule's result: it becomes a tool execution notification.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from tensorlint import __version__
from tensorlint.findings import Finding, Location
from tensorlint.output.context import OutputContext, escape, severity
from tensorlint.output.fingerprint import line_hashes
from tensorlint.project import PROJECT_URL
from tensorlint.rule import Rule
from tensorlint.rules import all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = PROJECT_URL
SOURCE_ROOT = "%SRCROOT%"
_LIMIT = 1024  # GitHub's limit on short and full descriptions


def write(findings: Sequence[Finding], context: OutputContext) -> str:
    rules = all_rules()
    index = {rule.code: i for i, rule in enumerate(rules)}
    hashes = line_hashes(findings, context)
    results = [
        _result(f, index[f.code], hashes[f], context) for f in findings if f.code is not None and f.code in index
    ]
    notifications = [_notification(f, context) for f in findings if f.code is None or f.code not in index]
    run = {
        "tool": {
            "driver": {
                "name": "tensorlint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_descriptor(rule) for rule in rules],
            }
        },
        "originalUriBaseIds": {SOURCE_ROOT: {"uri": context.root.absolute().as_uri().rstrip("/") + "/"}},
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    log = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2) + "\n"


def _descriptor(rule: type[Rule]) -> dict[str, object]:
    documentation = rule.documentation()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary[:_LIMIT]},
        "fullDescription": {"text": rule.description()[:_LIMIT]},
        "help": {"text": documentation, "markdown": documentation},
        "helpUri": rule.url(),
        "defaultConfiguration": {"level": rule.severity, "enabled": rule.default_enabled},
        "properties": {
            "tags": ["pytorch", "memory-leak"] if rule.severity == "error" else ["maintainability"],
            "problem.severity": "error" if rule.severity == "error" else "recommendation",
        },
    }


def _result(finding: Finding, rule_index: int, line_hash: str, context: OutputContext) -> dict[str, object]:
    return {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": severity(finding),
        "message": {"text": escape(finding.message)},
        "locations": [_location(finding, context)],
        "partialFingerprints": {"primaryLocationLineHash": line_hash},
    }


def _notification(finding: Finding, context: OutputContext) -> dict[str, object]:
    return {"level": "error", "message": {"text": escape(finding.message)}, "locations": [_location(finding, context)]}


def _location(finding: Finding, context: OutputContext) -> dict[str, object]:
    """The region is in the file as stored (a notebook's JSON text); a notebook's cell goes in properties."""
    location: dict[str, object] = {
        "physicalLocation": {
            "artifactLocation": _artifact(finding.filename, context),
            "region": _region(finding.file_location, finding.file_end_location),
        }
    }
    if finding.cell is not None:
        location["properties"] = {
            "cell": finding.cell.cell,
            "cellRegion": _region(finding.cell.location, finding.cell.end_location),
        }
    return location


def _region(start: Location, end: Location) -> dict[str, int]:
    return {"startLine": start.row, "startColumn": start.column, "endLine": end.row, "endColumn": end.column}


def _artifact(filename: str, context: OutputContext) -> dict[str, str]:
    """Relative to the source root where the file lies below it (GitHub maps these to the repository)."""
    relative = context.relative_path(filename)
    if Path(relative).is_absolute():
        return {"uri": Path(relative).as_uri()}
    return {"uri": quote(relative, errors="surrogateescape"), "uriBaseId": SOURCE_ROOT}
