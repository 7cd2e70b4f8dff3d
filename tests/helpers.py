"""What test modules import besides the sample texts (samples.py): where things are, how to run
the CLI and read what it reports. Fixtures are in conftest.py, which pytest loads and no test imports."""

from __future__ import annotations

import multiprocessing
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from tensorlint.rules import OPT_IN_CODES, default_codes

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
MARKER = re.compile(r"#\s*expect:\s*(?P<codes>TL\d{3}(?:\s*,\s*TL\d{3})*)")

# A patch of the engine in the test's process reaches the workers only when they are forked from it.
forked_workers = pytest.mark.skipif(
    multiprocessing.get_start_method() != "fork", reason="patches the engine in the parent for forked workers"
)


def markers(source: str) -> set[tuple[int, str]]:
    """(row, code) for every `# expect: TLnnn` marker of a source text."""
    found: set[tuple[int, str]] = set()
    for row, line in enumerate(source.splitlines(), start=1):
        match = MARKER.search(line)
        if match:
            found |= {(row, code.strip()) for code in match["codes"].split(",")}
    return found


def expected_markers(path: Path) -> set[tuple[int, str]]:
    """The markers of a fixture file."""
    return markers(path.read_text(encoding="utf-8"))


def default_rule_fixtures() -> list[Path]:
    """fixtures/TLnnn/*.py of the rules a plain run enables (an opt-in rule's folder configures itself)."""
    return sorted(p for p in FIXTURES.glob("TL*/*.py") if p.parent.name in default_codes())


# Opt-in rules about leaks: their fixtures are rewritten by the metamorphic tests too, with their
# code selected. TL900 is left out: it judges suppression comments against other rules' findings,
# not code, and its fixtures are about where those comments sit.
OPT_IN_LEAK_CODES = OPT_IN_CODES - {"TL900"}


def leak_rule_fixtures() -> list[Path]:
    """fixtures/TLnnn/*.py of the default rules and of the opt-in leak rules."""
    return sorted(p for p in FIXTURES.glob("TL*/*.py") if p.parent.name in {*default_codes(), *OPT_IN_LEAK_CODES})


def fixture_codes(fixture: str) -> tuple[str, ...]:
    """The codes a fixture is linted with, as its folder's configuration selects them: the default
    rules, and the folder's own rule when it is opt-in ("TL018/pos_x.py" adds TL018)."""
    folder = fixture.split("/", 1)[0]
    return (*default_codes(), folder) if folder in OPT_IN_LEAK_CODES else default_codes()


def write(folder: Path, relative: str, text: str) -> Path:
    """Write a text file below `folder`, making the folders on its way."""
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def cli(*args: str) -> int:
    """Run the CLI in-process; usage errors leave argparse by SystemExit, like the console script."""
    from tensorlint.cli import main

    try:
        return main(list(args))
    except SystemExit as exit:
        return exit.code  # type: ignore[return-value]


def run_module(
    module: str,
    *args: str,
    cwd: Path = ROOT,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """`python -m module args` in a subprocess, as a user or CI runs it, with its output as text."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def run_tensorlint(
    *args: str, cwd: Path = ROOT, stdin: str | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """The console command in a subprocess (`python -m tensorlint`): stdin, exit codes, real files."""
    return run_module("tensorlint", *args, cwd=cwd, stdin=stdin, timeout=timeout)


def reported(out: str) -> list[tuple[str, int, str]]:
    """(file, row, code) of each line of concise output that reports a finding."""
    found = []
    for line in out.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[1].isdigit() and parts[2].isdigit():
            found.append((parts[0], int(parts[1]), parts[3].split()[0]))
    return found


def without_torch(script: str) -> str:
    """A `python -c` program that runs `script` where importing torch fails, as on a machine
    without it (the static path must never need it; the verifier must say how to install it)."""
    return (
        "import sys\n\n"
        "class BlockTorch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        '        if name == "torch" or name.startswith("torch."):\n'
        '            raise ImportError("torch is blocked in this test")\n'
        "        return None\n\n"
        "sys.meta_path.insert(0, BlockTorch())\n" + script
    )
