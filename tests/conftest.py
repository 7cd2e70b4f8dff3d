from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
MARKER = re.compile(r"#\s*expect:\s*(?P<codes>TL\d{3}(?:\s*,\s*TL\d{3})*)")


def expected_markers(path: Path) -> set[tuple[int, str]]:
    """(row, code) for every `# expect: TLnnn` marker in a fixture."""
    found = set()
    for row, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = MARKER.search(line)
        if match:
            found |= {(row, code.strip()) for code in match["codes"].split(",")}
    return found


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture(autouse=True, scope="session")
def _result_cache_outside_the_tree(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The CLI caches results in the project root; tests keep it in a temporary folder (subprocesses inherit it)."""
    os.environ["TENSORLINT_CACHE_DIR"] = str(tmp_path_factory.mktemp("tensorlint_cache"))


def cli(*args: str) -> int:
    """Run the CLI in-process; usage errors leave argparse by SystemExit, like the console script."""
    from tensorlint.cli import main

    try:
        return main(list(args))
    except SystemExit as exit:
        return exit.code  # type: ignore[return-value]
