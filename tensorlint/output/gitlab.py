"""GitLab's Code Quality report (a subset of Code Climate's issue format).

https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format
Paths are relative to `CI_PROJECT_DIR` when GitLab sets it, else to the current directory.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from tensorlint.findings import Finding
from tensorlint.output.context import OutputContext, escape, severity
from tensorlint.output.fingerprint import line_hashes

_SEVERITY = {"error": "major", "warning": "minor"}


def write(findings: Sequence[Finding], context: OutputContext) -> str:
    project = os.environ.get("CI_PROJECT_DIR")
    if project:
        context = dataclasses.replace(context, root=Path(project))
    hashes = line_hashes(findings, context)
    issues = []
    seen: set[str] = set()
    for finding in findings:
        path = context.relative_path(finding.filename)
        check = finding.code or "file-not-checked"
        identity = f"{path}\0{check}\0{hashes[finding]}".encode("utf-8", "surrogateescape")  # names may be any bytes
        fingerprint = _unique(hashlib.sha256(identity).hexdigest(), seen)
        issues.append(
            {
                "type": "issue",
                "engine_name": "tensorlint",
                "check_name": check,
                "description": escape(f"{finding.code}: {finding.message}" if finding.code else finding.message),
                "categories": ["Bug Risk"],
                "severity": _SEVERITY[severity(finding)],
                "fingerprint": fingerprint,
                "location": {
                    "path": path,
                    "positions": {
                        "begin": {"line": finding.file_location.row, "column": finding.file_location.column},
                        "end": {"line": finding.file_end_location.row, "column": finding.file_end_location.column},
                    },
                },
            }
        )
    return json.dumps(issues, indent=2) + "\n"


def _unique(fingerprint: str, seen: set[str]) -> str:
    """Two findings of one rule on one line still need two fingerprints."""
    candidate, n = fingerprint, 1
    while candidate in seen:
        n += 1
        candidate = hashlib.sha256(f"{fingerprint}:{n}".encode()).hexdigest()
    seen.add(candidate)
    return candidate
