"""The flake8 plugin reports what the CLI reports, with flake8's own conventions."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import run_module, run_tensorlint
from samples import LEAKY, LEAKY_COLUMN, LEAKY_LINE, LEAKY_ROW
from tensorlint.rules import all_codes, default_codes

LINE = re.compile(r"^(?P<path>.+?):(?P<row>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) ")


def _positions(output: str) -> set[tuple[str, int, int, str]]:
    found = set()
    for line in output.splitlines():
        match = LINE.match(line)
        if match:
            found.add((match["path"], int(match["row"]), int(match["col"]), match["code"]))
    return found


def test_flake8_and_cli_report_the_same_findings_on_fixtures() -> None:
    # Opt-in rules are left out of both: their folders enable them in pyproject.toml, which flake8 does not read.
    opt_in = ",".join(sorted(all_codes() - set(default_codes())))
    cli = run_tensorlint("--quiet", "--ignore", opt_in, "fixtures")
    flake8 = run_module("flake8", "--select", "TL", "--extend-ignore", opt_in, "fixtures")
    assert flake8.returncode == 1, flake8.stderr
    # flake8 does not read notebooks, so fixtures/notebooks/ is the CLI's alone (tests/test_notebooks.py).
    cli_positions = {p for p in _positions(cli.stdout) if ".ipynb:cell " not in p[0]}
    assert cli_positions, cli.stderr
    assert _positions(flake8.stdout) == cli_positions


def test_flake8_leaves_opt_in_rules_off_until_selected() -> None:
    folder = "fixtures/TL018"
    assert ": TL018 " not in run_module("flake8", folder).stdout
    assert ": TL018 " in run_module("flake8", "--extend-select", "TL018", folder).stdout


def test_flake8_lists_the_plugin() -> None:
    result = run_module("flake8", "--version")
    assert "tensorlint" in result.stdout


def test_flake8_honours_noqa_and_keeps_going_after_a_file_that_does_not_parse(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n", encoding="utf-8")
    silenced_twin = f"{LEAKY_LINE}\n{LEAKY_LINE}  # noqa: TL004"  # the next row, the same leak
    (tmp_path / "leaky.py").write_text(LEAKY.replace(LEAKY_LINE, silenced_twin), encoding="utf-8")
    result = run_module("flake8", "--select", "TL,E999", ".", cwd=tmp_path)
    positions = _positions(result.stdout)
    assert ("./leaky.py", LEAKY_ROW, LEAKY_COLUMN, "TL004") in positions
    assert not any(row == LEAKY_ROW + 1 for _, row, _, _ in positions)
    assert any(code == "E999" and path == "./broken.py" for path, _, _, code in positions)
