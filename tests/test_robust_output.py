"""Hostile names and messages: no control character reaches a report raw, in any format."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers import cli
from samples import LEAKY
from tensorlint.findings import Applicability as Safety
from tensorlint.findings import Edit, Finding, Fix, Location
from tensorlint.output import WRITERS, OutputContext

CONTROLS = "\x1b[2J\x1b]0;pwned\x07\r\n\x00\x08\x7f\u202e\u2028"
NAME = f"evil{CONTROLS}.py"
MESSAGE = f"leak{CONTROLS}here"
HOSTILE = [
    Finding(
        "TL004",
        MESSAGE,
        NAME,
        Location(1, 1),
        Location(1, 2),
        Fix(MESSAGE, Safety.UNSAFE, (Edit(CONTROLS, Location(1, 1), Location(1, 1)),)),
    ),
    Finding(None, MESSAGE, NAME, Location(2, 1), Location(2, 1)),
]
RAW = [c for c in CONTROLS if not c.isprintable()]  # the bidi override and line separator too


def _raw_controls(text: str) -> list[str]:
    allowed = {"\n"}  # the writers' own line breaks
    return [c for c in RAW if c in text and c not in allowed]


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_no_control_character_reaches_any_format_raw(name: str) -> None:
    text = WRITERS[name](HOSTILE, OutputContext(source_of=lambda _: f"x = 1{CONTROLS}\n"))
    assert _raw_controls(text) == []
    lines = text.splitlines()
    if name in ("concise", "github", "json-lines"):
        assert len(lines) == len(HOSTILE)  # a newline in a name never starts a forged line
    if name == "junit":
        ET.fromstring(text)
    if name in ("json", "gitlab", "sarif"):
        json.loads(text)


def test_json_keeps_the_exact_name_and_message_for_tools() -> None:
    [record, _] = json.loads(WRITERS["json"](HOSTILE, OutputContext()))
    assert record["message"] == MESSAGE and record["filename"].endswith(NAME)


def test_sarif_escapes_messages_and_percent_encodes_the_uri() -> None:
    log = json.loads(WRITERS["sarif"](HOSTILE, OutputContext(root=Path("/"))))
    [result] = log["runs"][0]["results"]
    assert "\x1b" not in result["message"]["text"] and "\\x1b" in result["message"]["text"]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert "%1B" in uri and "%0D%0A" in uri and "%00" in uri


@pytest.mark.skipif(sys.platform != "linux", reason="needs file names with control characters")
def test_a_real_file_with_a_hostile_name_through_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    name = "evil\x1b[31m\r\nfake.py:1:1: TL001 forged\x07.py"  # \x00 cannot be in a real name
    (tmp_path / name).write_text(LEAKY, encoding="utf-8")
    os.mkfifo(tmp_path / "pipe\x1b]0;x\x07.py")
    for output_format in ("concise", "full", "github", "junit", "json", "sarif", "gitlab", "json-lines"):
        assert cli("-j", "1", "--output-format", output_format, ".") == 1
        out, err = capsys.readouterr()
        assert _raw_controls(out) == [] and _raw_controls(err) == [], output_format
        assert "\nfake.py:1:1: TL001" not in out


def test_a_reader_that_closes_the_pipe_gets_no_traceback() -> None:
    """`tensorlint src | head -1`: the findings after the first meet a closed pipe."""
    fixtures = Path(__file__).resolve().parent.parent / "fixtures" / "TL001"
    process = subprocess.Popen(
        [sys.executable, "-m", "tensorlint", "--isolated", "--no-cache", str(fixtures)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before the first finding is written
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
