"""Any text, valid or not: no exception escapes the core, and fixes hand back code that parses.

Programs come from Python's grammar (hypothesmith) and from real files mutated line by line
and token by token (the fixtures, the examples and tensorlint's own sources). CI runs a few
examples of each; `TENSORLINT_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz.py` runs a long search.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import FIXTURES, ROOT
from tensorlint.engine import lint_source
from tensorlint.fixes import fix_source
from tensorlint.rules import all_codes

EXAMPLES = int(os.environ.get("TENSORLINT_FUZZ_EXAMPLES", "25"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # a shared CI machine makes timings noisy; the per-file limit is tested elsewhere
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    derandomize=EXAMPLES <= 100,  # CI sees the same examples every run; a long run explores
)
CODES = all_codes()  # TL900 too: it reads comments of files that never reach the rules
REAL_FILES = sorted([*FIXTURES.rglob("*.py"), *(ROOT / "examples").glob("*.py"), *(ROOT / "tensorlint").rglob("*.py")])
TOKENS = ["torch", "(", ")", "[", "]", ":", "lambda", "\\", "'", '"""', "#", "\t", "\x0c", "\x00", "\r", "yield", "@"]
TOKENS += ["loss.backward()", "self.cache.append(x)", "total += loss", "async ", "await ", "é", "\ufeff", "if x:\n"]

# Programs from the grammar rarely name torch, and a file without it is screened out: add it.
TORCH_PRELUDE = "import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader\n"


def _lint(source: str) -> None:
    for finding in lint_source(source, "fuzzed.py", codes=CODES):
        assert finding.location.row >= 1 and finding.location.column >= 1


def _fix(source: str) -> None:
    result = fix_source(source, "fuzzed.py", codes=CODES, unsafe=True)
    if result.source != source:
        cst.parse_module(result.source)  # what --fix writes always parses
    else:
        assert not result.fixed or result.refused


@FUZZ
@given(hypothesmith.from_grammar())
def test_programs_from_the_grammar_never_raise(program: str) -> None:
    _lint(TORCH_PRELUDE + program)
    _lint(program)


@FUZZ
@given(hypothesmith.from_node())
def test_programs_from_libcst_nodes_lint_and_fix_or_refuse(program: str) -> None:
    _lint(TORCH_PRELUDE + program)
    _fix(TORCH_PRELUDE + program)


def _mutated(lines: list[str], rng: random.Random) -> str:
    """Delete, duplicate or swap lines, and insert tokens: the edits of a file half-way through editing."""
    lines = list(lines)
    for _ in range(rng.randint(1, 6)):
        if not lines:
            break
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        action = rng.choice(["delete", "duplicate", "swap", "token", "token"])
        if action == "delete":
            del lines[i]
        elif action == "duplicate":
            lines.insert(j, lines[i])
        elif action == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        else:
            column = rng.randint(0, len(lines[i]))
            lines[i] = lines[i][:column] + rng.choice(TOKENS) + lines[i][column:]
    return "".join(lines)


@FUZZ
@given(st.sampled_from(REAL_FILES), st.randoms(use_true_random=False))
def test_real_files_mutated_never_raise(path: Path, rng: random.Random) -> None:
    source = _mutated(path.read_text(encoding="utf-8").splitlines(keepends=True), rng)
    _lint(source)
    if "torch" in source:
        _fix(source)


@pytest.mark.parametrize("path", REAL_FILES[:: max(1, len(REAL_FILES) // 40)], ids=lambda p: p.name)
def test_real_files_lint_and_fix_cleanly(path: Path) -> None:
    _lint(path.read_text(encoding="utf-8"))
    _fix(path.read_text(encoding="utf-8"))
