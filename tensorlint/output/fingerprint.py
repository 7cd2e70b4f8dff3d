"""Stable identities for findings, so that CI systems track an alert across commits.

`primaryLocationLineHash` follows the shape of GitHub's own (`<hash>:<n>`, where `n` counts
earlier lines of the file with the same text): it hashes the line's text without whitespace,
so it survives lines moving and re-indentation, but not an edit of the line itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from tensorlint.findings import Finding
from tensorlint.output.context import OutputContext
from tensorlint.text import split_lines


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def line_hashes(findings: Sequence[Finding], context: OutputContext) -> dict[Finding, str]:
    """`<hash>:<occurrence>` of each finding's line."""
    by_file: dict[str, list[str]] = {}
    result = {}
    for finding in findings:
        if finding.filename not in by_file:
            source = context.source_of(finding.filename)
            by_file[finding.filename] = _numbered_hashes(source) if source is not None else []
        hashes = by_file[finding.filename]
        row = finding.location.row
        # Without the file's text, the finding's own words stand in for the line.
        result[finding] = hashes[row - 1] if 0 < row <= len(hashes) else f"{_digest(finding.message)}:1"
    return result


def _numbered_hashes(source: str) -> list[str]:
    seen: dict[str, int] = {}
    numbered = []
    for line in split_lines(source, keepends=True):
        digest = _digest("".join(line.split()))
        seen[digest] = seen.get(digest, 0) + 1
        numbered.append(f"{digest}:{seen[digest]}")
    return numbered
