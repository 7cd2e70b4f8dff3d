"""The CI formats: SARIF against the official schema, GitHub annotations, GitLab, JUnit, JSON lines; colour."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers import ROOT, cli, write
from samples import CACHE, LEAKY, LEAKY_COLUMN, LEAKY_ROW
from tensorlint.findings import Applicability, Edit, Finding, Fix, Location
from tensorlint.output import WRITERS, OutputContext, use_colour
from tensorlint.output.github import escape_data, escape_property


@pytest.fixture
def ci_project(project: Path) -> Path:
    """What a CI run checks: pkg/leaky.py with one TL004, and broken.py, which does not parse."""
    write(project, "pkg/leaky.py", LEAKY)
    write(project, "broken.py", "import torch\nx = = 1\n")
    return project


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = cli(*args)
    return code, capsys.readouterr().out


# SARIF


def test_sarif_is_valid_against_the_sarif_2_1_0_schema(ci_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    code, out = run(capsys, "--output-format", "sarif", "pkg", "broken.py")
    assert code == 1
    log = json.loads(out)
    jsonschema.Draft4Validator(schema).validate(log)
    assert log["version"] == "2.1.0"


def test_sarif_has_what_github_code_scanning_needs(ci_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run(capsys, "--output-format", "sarif", "pkg")
    [run_] = json.loads(out)["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "tensorlint" and driver["version"]
    rules = {rule["id"]: rule for rule in driver["rules"]}
    tl004 = rules["TL004"]
    assert tl004["shortDescription"]["text"] and tl004["fullDescription"]["text"]
    assert len(tl004["fullDescription"]["text"]) <= 1024
    assert "## What it does" in tl004["help"]["markdown"] and tl004["help"]["text"]
    assert tl004["helpUri"].endswith("TL004.md")
    [result] = run_["results"]
    assert result["ruleId"] == "TL004"
    assert driver["rules"][result["ruleIndex"]]["id"] == "TL004"
    assert result["message"]["text"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "pkg/leaky.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] == LEAKY_ROW and location["region"]["startColumn"] == LEAKY_COLUMN
    assert {"endLine", "endColumn"} <= set(location["region"])
    assert re.fullmatch(r"[0-9a-f]{16}:\d+", result["partialFingerprints"]["primaryLocationLineHash"])
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ci_project.as_uri() + "/"


def test_sarif_fingerprint_survives_lines_moving(ci_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def fingerprint() -> str:
        _, out = run(capsys, "--output-format", "sarif", "pkg")
        return str(json.loads(out)["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"])

    before = fingerprint()
    (ci_project / "pkg" / "leaky.py").write_text("# a new first line\n\n" + LEAKY, encoding="utf-8")
    assert fingerprint() == before


def test_sarif_reports_an_unparsable_file_as_a_notification_not_a_result(
    ci_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = run(capsys, "--output-format", "sarif", "broken.py")
    [run_] = json.loads(out)["runs"]
    assert run_["results"] == []
    [notification] = run_["invocations"][0]["toolExecutionNotifications"]
    assert notification["message"]["text"].startswith("SyntaxError")


def test_sarif_of_a_clean_run_has_no_results_and_no_summary_line(
    ci_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ci_project / "clean.py").write_text("import torch\n", encoding="utf-8")
    code, out = run(capsys, "--output-format", "sarif", "clean.py")
    assert code == 0
    assert json.loads(out)["runs"][0]["results"] == []


# GitHub

ANNOTATION = re.compile(
    r"^::(?P<level>error|warning) (?P<properties>[^:]*)::(?P<message>.*)$"
)  # properties hold no raw `:`; that is what their escaping is for


def test_github_annotation_syntax(ci_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "--output-format", "github", "pkg")
    assert code == 1
    [line] = out.splitlines()
    match = ANNOTATION.match(line)
    assert match, line
    properties = dict(item.split("=", 1) for item in match["properties"].split(","))
    assert properties["title"] == "tensorlint (TL004)"
    assert properties["file"] == "pkg/leaky.py"
    assert (properties["line"], properties["col"]) == (str(LEAKY_ROW), str(LEAKY_COLUMN))
    assert {"endLine", "endColumn"} <= set(properties)
    assert match["message"].startswith(f"pkg/leaky.py:{LEAKY_ROW}:{LEAKY_COLUMN}: TL004 ")


def test_github_escapes_percent_newlines_and_property_separators() -> None:
    assert escape_data("100%\r\nnext") == "100%25%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    finding = Finding("TL004", "odd,name: 50%\nnext", "dir,x/a:b.py", Location(1, 2), Location(1, 3))
    [line] = WRITERS["github"]([finding], OutputContext()).splitlines()
    match = ANNOTATION.match(line)
    assert match, line
    assert "file=dir%2Cx/a%3Ab.py" in match["properties"]
    assert "\n" not in match["message"] and "%25" in match["message"]


# GitLab


def test_gitlab_code_quality_report(ci_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "--output-format", "gitlab", "pkg", "broken.py")
    assert code == 1
    issues = json.loads(out)
    assert len(issues) == 2
    for issue in issues:
        assert {"description", "check_name", "fingerprint", "severity", "location"} <= set(issue)
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert set(issue["location"]["positions"]["begin"]) == {"line", "column"}
    assert len({issue["fingerprint"] for issue in issues}) == 2
    leak = next(issue for issue in issues if issue["check_name"] == "TL004")
    assert leak["location"]["path"] == "pkg/leaky.py"
    assert leak["location"]["positions"]["begin"] == {"line": LEAKY_ROW, "column": LEAKY_COLUMN}


def test_gitlab_paths_are_relative_to_ci_project_dir(
    ci_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CI_PROJECT_DIR", str(ci_project / "pkg"))
    _, out = run(capsys, "--output-format", "gitlab", "pkg")
    assert json.loads(out)[0]["location"]["path"] == "leaky.py"


# JUnit


def test_junit_is_parseable_xml_with_a_failure_per_finding(
    ci_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "--output-format", "junit", "pkg", "broken.py")
    assert code == 1
    root = ET.fromstring(out)
    assert root.tag == "testsuites" and root.get("failures") == "2"
    cases = root.findall("./testsuite/testcase")
    assert {case.get("name") for case in cases} == {"org.tensorlint.TL004", "org.tensorlint.file-not-checked"}
    leak = next(case for case in cases if case.get("name") == "org.tensorlint.TL004")
    assert leak.get("line") == str(LEAKY_ROW)
    assert leak.find("failure") is not None


def test_junit_of_a_clean_run_has_one_passing_case(ci_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ci_project / "clean.py").write_text("import torch\n", encoding="utf-8")
    _, out = run(capsys, "--output-format", "junit", "clean.py")
    root = ET.fromstring(out)
    assert root.get("failures") == "0"
    assert root.find("./testsuite/testcase/failure") is None


# JSON lines


def test_json_lines_has_one_ruff_record_per_line(ci_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run(capsys, "--output-format", "json-lines", "pkg", "broken.py")
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["code"] for r in records] == [None, "TL004"]
    _, array = run(capsys, "--output-format", "json", "pkg", "broken.py")
    assert records == json.loads(array)


# Escaping of control characters, in every format

HOSTILE = Finding("TL004", "leak\x1b[31m\x07 here", "evil\x1b]0;x\x07.py", Location(1, 1), Location(1, 2))


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_control_characters_never_reach_the_output_raw(name: str) -> None:
    text = WRITERS[name]([HOSTILE], OutputContext())
    assert "\x1b" not in text and "\x07" not in text
    if name == "junit":
        ET.fromstring(text)


# Colour


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_colour_only_on_a_terminal_and_never_with_no_color() -> None:
    assert use_colour(_Stream(tty=True), {})
    assert not use_colour(_Stream(tty=False), {})
    assert not use_colour(_Stream(tty=True), {"NO_COLOR": "1"})
    assert use_colour(_Stream(tty=False), {"FORCE_COLOR": "1"})
    assert not use_colour(_Stream(tty=True), {"NO_COLOR": "1", "FORCE_COLOR": "1"})


def test_piped_output_has_no_escape_sequences(ci_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run(capsys, "--output-format", "full", "pkg")
    assert "\x1b" not in out


def test_coloured_concise_output_still_reads_the_same_without_the_colour() -> None:
    finding = Finding("TL004", "message", "a.py", Location(3, 5), Location(3, 9))
    plain = WRITERS["concise"]([finding], OutputContext())
    coloured = WRITERS["concise"]([finding], OutputContext(colour=True))
    assert "\x1b[" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


# --statistics and --show-fixes


def test_statistics_counts_per_code(ci_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ci_project / "pkg" / "more.py").write_text(LEAKY, encoding="utf-8")
    code, out = run(capsys, "--statistics", "pkg")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].split("\t") == ["2", "TL004", "graph-accumulated-in-loop"]
    assert "Found 2 errors." in lines
    _, out = run(capsys, "--statistics", "--output-format", "json", "pkg")
    assert json.loads(out) == [{"code": "TL004", "name": "graph-accumulated-in-loop", "count": 2, "fixable": False}]


def test_show_fixes_says_when_there_are_none(ci_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(ci_project, "cache.py", CACHE)  # TL001 has no fix
    _, out = run(capsys, "--show-fixes", "cache.py")
    assert "TL001" in out
    assert "No fixes available." in out.splitlines()


def test_show_fixes_lists_unsafe_fixes_with_their_safety(ci_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run(capsys, "--show-fixes", "pkg")
    assert "1 unsafe fix available with `--fix --unsafe-fixes`:" in out.splitlines()
    assert any(line.endswith("(unsafe)") and "TL004 Wrap the loop in" in line for line in out.splitlines())
    _, out = run(capsys, "--show-fixes", "--unsafe-fixes", "pkg")
    assert "1 fix available with `--fix`:" in out.splitlines()


def test_show_fixes_lists_each_available_fix() -> None:
    from tensorlint.output import FixAdvice, fix_listing

    fix = Fix("Remove unused `noqa` directive", Applicability.SAFE, (Edit("", Location(1, 5), Location(1, 20)),))
    finding = Finding("TL900", "Unused `noqa` directive", "a.py", Location(1, 7), Location(1, 20), fix)
    assert fix_listing([finding], FixAdvice(unsafe=False, pre_commit=False)).splitlines() == [
        "1 fix available with `--fix`:",
        "  a.py:1:7: TL900 Remove unused `noqa` directive (safe)",
    ]
    assert "TL900 [*] " in WRITERS["concise"]([finding], OutputContext())


def test_output_file_receives_the_report(ci_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "--output-format", "sarif", "-o", "report.sarif", "pkg")
    assert code == 1 and out == ""
    assert json.loads((ci_project / "report.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]
