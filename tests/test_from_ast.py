"""Trees built from `ast` (tensorlint/analysis/from_ast.py) are LibCST's trees, and the first
analysis on them never hides a finding.

The engine analyses each file first on a tree that `from_ast` builds from Python's own parser,
and parses it with LibCST only when that finds something. So the built tree must have LibCST's
nodes, fields and order wherever the analysis reads (every field but whitespace and punctuation),
and every fixture must give the same findings with the first analysis and without it.
`bench/screen.py` checks the same over the pinned corpus.
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import libcst as cst
import pytest

from helpers import FIXTURES, ROOT
from tensorlint import engine
from tensorlint.analysis.from_ast import build_module
from tensorlint.analysis.parse import parse_module
from tensorlint.analysis.walk import _child_fields
from tensorlint.rules import all_codes

PYTHON_FILES = sorted(p for p in [*FIXTURES.rglob("*.py"), *(ROOT / "examples").rglob("*.py")])

# What `ast` does not keep, by design (from_ast's docstring): the module's own formatting, a
# slice's second colon, and how strings and numbers are spelt (compared by value below).
_FORMATTING = frozenset(["encoding", "default_indent", "default_newline", "has_trailing_newline", "second_colon"])
_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
_NUMBERS = (cst.Integer, cst.Float, cst.Imaginary)


def differences(built: object, parsed: object, path: str = "") -> list[str]:
    """Where two trees differ in what the analysis reads; empty when they are the same."""
    if isinstance(built, _STRINGS) and isinstance(parsed, _STRINGS):
        if isinstance(parsed, cst.FormattedString) or isinstance(built, cst.FormattedString):
            if type(built) is not type(parsed):  # `f"a" "b"`: one f-string to `ast`, two strings to LibCST
                return [] if isinstance(parsed, cst.ConcatenatedString) else [f"{path}: {type(built).__name__}"]
            return differences(built.parts, parsed.parts, path + ".parts")  # type: ignore[union-attr]
        same = built.evaluated_value == parsed.evaluated_value  # type: ignore[union-attr]
        return [] if same else [f"{path}: string {built.evaluated_value!r}"]  # type: ignore[union-attr]
    if isinstance(built, list | tuple) and isinstance(parsed, list | tuple):
        if len(built) != len(parsed):
            return [f"{path}: {len(built)} items, LibCST {len(parsed)}"]
        return [
            d for i, (a, b) in enumerate(zip(built, parsed, strict=True)) for d in differences(a, b, f"{path}[{i}]")
        ]
    if type(built) is not type(parsed):
        return [f"{path}: {type(built).__name__}, LibCST {type(parsed).__name__}"]
    if isinstance(built, _NUMBERS):
        same = built.evaluated_value == parsed.evaluated_value  # type: ignore[attr-defined]
        return [] if same else [f"{path}: {built.value}, LibCST {parsed.value}"]  # type: ignore[attr-defined]
    if isinstance(built, cst.FormattedStringText):
        return []  # escaped braces and quotes: spelling
    if isinstance(built, cst.CSTNode):
        return [
            d
            for name in _child_fields(type(built))
            if name not in _FORMATTING
            for d in differences(getattr(built, name), getattr(parsed, name), f"{path}.{type(built).__name__}.{name}")
        ]
    if built != parsed and not isinstance(built, cst.MaybeSentinel):
        return [f"{path}: {built!r}, LibCST {parsed!r}"]
    return []


def assert_same_tree(source: str) -> None:
    built = build_module(source)
    assert built is not None
    assert differences(built, parse_module(source)) == []


# Every statement and expression that `from_ast` builds, in the spellings whose trees differ.
EVERY_FORM = '''
"""Docstring."""
from __future__ import annotations
import os.path as osp, sys
from . import sibling
from ..pkg.mod import (a as b, c)
from m import *
global_name: int = 1
x = y = [1, *rest]; z = {**d, "k": 2}
a, *b = c
x += 1; x @= m
del x, y[0], z.attr
del (p)
assert x, "message"
raise ValueError("no") from error
if a: pass
elif b: return_value = 1
else:
    if c:
        pass
for i, (j, k) in enumerate(pairs):
    continue
else:
    break_out = True
while not done: break
async def run(a, /, b=1, *args, c, d: int = 2, **kwargs) -> None:
    async with lock as held, other() as (p, q):
        await thing
    async for item in stream:
        yield item
    values = [v async for v in stream if v if not v]
def gen(*, only):
    nonlocal_value = yield from inner()
    global everything
    return lambda q, *r, s=1, **t: q
class Net(Base, *mixins, metaclass=Meta, **options):
    @property
    @decorate(1)
    def forward(self, x): return x[1:2, ::3, 4][...] if x else -x ** 2 // 3
try:
    pass
except (KeyError, IndexError) as error:
    pass
except Exception:
    raise
else:
    pass
finally:
    pass
with open(path) as f: data = f.read()
squares = {k: v for k, v in items.items()}; unique = {s for s in seq}; lazy = (g for g in seq)
print(f"{x!r:>{width}} and {y}", "a" "b", b"bytes", 1_000, 0x10, 1.5e3, 2j, True, None, ...)
if (n := len(a)) > 10 and b or c is not d and e not in f < g <= h: pass
call(a, k=1, *rest, **more)
matrix = a @ b | c & d ^ e << 1 >> 2 % 3
'''


def test_every_form_is_built_as_libcst_parses_it() -> None:
    assert_same_tree(EVERY_FORM)


def test_except_star_is_built_as_libcst_parses_it() -> None:
    assert_same_tree("try:\n    pass\nexcept* ValueError as group:\n    pass\n")


@pytest.mark.parametrize(
    "source",
    [
        "match command:\n    case [x]:\n        pass\n",  # not built: LibCST parses the file
        "def f(:\n    pass\n",  # a syntax error is LibCST's to report
        "x = 'a\\\udcff'\n",  # text that is not UTF-8
    ],
)
def test_what_is_not_built_is_left_to_libcst(source: str) -> None:
    assert build_module(source) is None


@pytest.mark.parametrize("path", PYTHON_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_fixture_is_built_as_libcst_parses_it(path: Path) -> None:
    assert_same_tree(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", PYTHON_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_first_analysis_hides_no_finding(path: Path) -> None:
    codes = all_codes()
    with mock.patch.object(engine, "_finds_nothing", lambda source, path, codes: False):
        without = engine.lint_file(path, codes=codes)
    assert engine.lint_file(path, codes=codes) == without


NET = """import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = []

    def forward(self, x):
        {statement}
        return x
"""


def test_only_a_file_with_a_finding_is_parsed_by_libcst(monkeypatch: pytest.MonkeyPatch) -> None:
    def parse(source: str) -> None:
        raise AssertionError("parsed by LibCST")

    monkeypatch.setattr(engine, "parse_module", parse)
    assert engine.lint_source(NET.format(statement="self.seen = [x.shape]"), "net.py") == []
    with pytest.raises(AssertionError, match="parsed by LibCST"):
        engine.lint_source(NET.format(statement="self.seen.append(x.relu())"), "net.py")


def test_a_file_that_is_not_built_is_analysed_on_libcst_tree() -> None:
    leaky = NET.format(statement="self.seen.append(x.relu())") + "\nmatch Net():\n    case _:\n        pass\n"
    assert build_module(leaky) is None
    assert [(f.code, f.location.row) for f in engine.lint_source(leaky, "net.py")] == [("TL001", 9)]
