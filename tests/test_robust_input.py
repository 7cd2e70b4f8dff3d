"""Bad input: each file gets a clear message at its place, and the files around it are still checked."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from helpers import cli, reported
from samples import LEAKY, LEAKY_ROW
from tensorlint.engine import lint_source
from tensorlint.source import MAX_BRACKET_DEPTH, MAX_CHAIN

# (file name, bytes, what the report says: None for "linted like any file")
BAD_FILES = {
    "syntax_error": ("import torch\nx = = 1\n", "2:5: SyntaxError: invalid syntax"),
    "python2_print": ("import torch\nprint 'loss', loss\n", "2:1: SyntaxError: Missing parentheses in call to 'print'"),
    "python2_exec": ("import torch\nexec 'x = 1'\n", "2:1: SyntaxError: Missing parentheses in call to 'exec'"),
    "python2_octal": ("import torch\nx = 0777\n", "2:5: SyntaxError: leading zeros in decimal integer literals"),
    "python2_backticks": ("import torch\nx = `y`\n", "2:5: SyntaxError: invalid syntax"),
    "null_byte": ("import torch\nx = 1\x00\n", "SyntaxError: source code string cannot contain null bytes"),
    "unterminated_string": ("import torch\nx = '''open\n", "2:5: SyntaxError: unterminated triple-quoted string"),
    "lone_backslash": ("import torch\nx = 1 \\", "SyntaxError: "),
    "mixed_tabs_and_spaces": (
        "import torch\nif x:\n\tif y:\n        pass\n",
        "4:1: SyntaxError: inconsistent use of tabs",
    ),
    "deep_brackets": ("import torch\nx = " + "[" * 5000 + "]" * 5000 + "\n", "2:1: file too deeply nested to parse"),
    "deep_unary": ("import torch\nx = " + "-" * 20000 + "1\n", "2:1: file too deeply nested to parse"),
    # Python's parser reads this chain, so a file with no finding is checked in full (GOOD_FILES);
    # one with a finding is parsed by LibCST too, which would overflow its stack.
    "deep_boolean_chain": (LEAKY + "x = " + " and ".join(["a"] * 5000) + "\n", "file too deeply nested"),
    "deep_lambda": ("import torch\nf = " + "lambda: " * 3000 + "1\n", "file too deeply nested to parse"),
    "deep_indentation": (
        "import torch\n" + "".join(" " * i + "if x:\n" for i in range(120)) + " " * 120 + "pass\n",
        "SyntaxError: too many levels of indentation",
    ),
}
GOOD_FILES = {
    "empty": "",
    "only_torch": "torch",
    "tabs": "import torch\nif x:\n\tif y:\n\t\ttotal = 0\n",
    "form_feed": "import torch\n\x0c\ndef f():\n    pass\n\x0c\nx = 1\n",
    "crlf": LEAKY.replace("\n", "\r\n"),
    "cr_only": LEAKY.replace("\n", "\r"),
    "mixed_endings": LEAKY.replace("\n", "\r\n", 3),
    "no_final_newline": LEAKY.rstrip("\n"),
    "chain_within_limits": "import torch\nx = " + " + ".join(["a"] * 200) + "\n",
    "deep_boolean_chain_with_no_finding": "import torch\nx = " + " and ".join(["a"] * 5000) + "\n",
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_bad_file_is_reported_at_its_place_and_the_next_file_is_checked(
    sample_project: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    text, expected = BAD_FILES[name]
    (sample_project / "bad.py").write_bytes(text.encode("utf-8"))
    assert cli("-j", "1", "bad.py", "leaky.py") == 1
    out, err = capsys.readouterr()
    [line] = [line for line in out.splitlines() if line.startswith("bad.py:")]
    assert expected in line
    assert reported(out)[-1] == ("leaky.py", LEAKY_ROW, "TL004")
    assert "Traceback" not in err


@pytest.mark.parametrize("name", sorted(GOOD_FILES))
def test_odd_but_valid_text_is_linted(name: str) -> None:
    text = GOOD_FILES[name]
    findings = lint_source(text, "odd.py")
    assert all(f.code is not None for f in findings), findings
    if "total +=" in text:
        assert [(f.code, f.location.row) for f in findings] == [("TL004", LEAKY_ROW)]


def test_limits_sit_far_above_real_code() -> None:
    assert MAX_BRACKET_DEPTH == 200  # CPython's tokenizer refuses deeper
    assert lint_source("import torch\nx = " + "(" * 150 + "1" + ")" * 150 + "\n", "x.py") == []
    assert lint_source("import torch\nx = [" + ", ".join(["a + 1"] * MAX_CHAIN * 3) + "]\n", "x.py") == []
    assert lint_source('import torch\nx = "' + "(" * 5000 + '"\n', "x.py") == []  # brackets in strings do not nest


def test_a_pep_263_encoding_and_a_bom_decode_and_a_wrong_cookie_is_reported(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (sample_project / "cp1252.py").write_bytes(("# coding: cp1252\n# \u20ac\n" + LEAKY).encode("cp1252"))
    (sample_project / "bom.py").write_bytes(b"\xef\xbb\xbf" + LEAKY.encode())
    # A codec that a package registers (`future_fstrings`) over UTF-8 text is read as UTF-8.
    (sample_project / "registered.py").write_bytes(("# -*- coding: future_fstrings -*-\n" + LEAKY).encode())
    (sample_project / "unknown.py").write_bytes(b"# coding: klingon\nx = '\xff'\n")
    (sample_project / "bom_and_latin1.py").write_bytes(b"\xef\xbb\xbf# coding: latin-1\nimport torch\n")
    assert cli("-j", "1", "cp1252.py", "bom.py", "registered.py", "unknown.py", "bom_and_latin1.py") == 1
    out = capsys.readouterr().out
    assert ("cp1252.py", LEAKY_ROW + 2, "TL004") in reported(out)
    assert ("bom.py", LEAKY_ROW, "TL004") in reported(out)
    assert ("registered.py", LEAKY_ROW + 1, "TL004") in reported(out)
    assert "unknown.py:1:1: cannot read file: unknown encoding: klingon" in out  # and not UTF-8 either
    assert "bom_and_latin1.py:1:1: cannot read file: encoding problem: utf-8" in out  # a BOM, then a latin-1 cookie


def test_a_10_mb_generated_file_is_checked_in_bounded_time(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    block = "def f{n}(x):\n    return torch.relu(x) + {n}\n\n\n"
    target = 11 * 1024 * 1024
    count = target // len(block.format(n=10**6))
    (sample_project / "big.py").write_text("import torch\n\n" + "".join(block.format(n=n) for n in range(count)))
    assert (sample_project / "big.py").stat().st_size > 10 * 1024 * 1024
    started = time.monotonic()
    assert cli("-j", "1", "--timeout", "2", "--output-format", "json", "big.py") == 1
    assert time.monotonic() - started < 30  # the time limit stops the analysis, not the machine
    [record] = json.loads(capsys.readouterr().out)
    assert record["code"] is None and "took longer than the time limit of 2 s" in record["message"]


def test_a_stub_file_is_checked_like_a_module(sample_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (sample_project / "model.pyi").write_text(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor) -> torch.Tensor: ...\n"
    )
    assert cli("model.pyi") == 0


def test_malformed_notebooks_are_reported_and_the_run_goes_on(
    sample_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = {
        "binary.ipynb": b"\x89PNG\r\n\x1a\n\x00\x00",
        "empty.ipynb": b"",
        "truncated.ipynb": b'{"cells": [{"cell_type": "code", "source": ["import torch\\n", "x = (',
        "deep.ipynb": json.dumps(
            {"cells": [{"cell_type": "code", "source": "import torch\nx = " + "(" * 3000}]}
        ).encode(),
        "cells_not_a_list.ipynb": b'{"cells": 7, "metadata": {}}',
    }
    for name, data in bad.items():
        (sample_project / name).write_bytes(data)
    assert cli("-j", "1", *bad, "leaky.py") == 1
    out, err = capsys.readouterr()
    for name in bad:
        assert any(line.startswith(f"{name}:") for line in out.splitlines()), (name, out)
    assert ("leaky.py", LEAKY_ROW, "TL004") in reported(out)
    assert "Traceback" not in err
