"""JUnit XML, as ruff writes it: one testsuite per file, one failed testcase per finding.

Every attribute and text goes through `escape`, since XML 1.0 cannot hold control characters.
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorlint.findings import Finding
from tensorlint.output.context import OutputContext, escape


def write(findings: Sequence[Finding], context: OutputContext) -> str:
    import xml.etree.ElementTree as ET  # here: only --output-format junit needs it

    count = str(max(len(findings), 1))
    root = ET.Element("testsuites", name="tensorlint", tests=count, failures=str(len(findings)), errors="0")
    if not findings:
        suite = ET.SubElement(root, "testsuite", name="tensorlint", tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="No errors found", classname="tensorlint")
    by_file: dict[str, list[Finding]] = {}
    for finding in findings:
        by_file.setdefault(finding.filename, []).append(finding)
    for filename, in_file in by_file.items():
        name = escape(filename)
        size = str(len(in_file))
        suite = ET.SubElement(root, "testsuite", name=name, tests=size, failures=size, errors="0")
        for finding in in_file:
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"org.tensorlint.{finding.code or 'file-not-checked'}",
                classname=name,
                file=name,
                line=str(finding.file_location.row),
                column=str(finding.file_location.column),
            )
            failure = ET.SubElement(case, "failure", message=escape(finding.message))
            failure.text = f"{_where(finding)}, {escape(finding.message)}"
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _where(finding: Finding) -> str:
    if finding.cell is None:
        return f"line {finding.location.row}, col {finding.location.column}"
    return f"cell {finding.cell.cell}, line {finding.cell.location.row}, col {finding.cell.location.column}"
