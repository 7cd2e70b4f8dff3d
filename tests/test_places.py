"""The nodes the index keeps for each function, with their places, are what a walk finds.

The rules and the flow pass read a function's own nodes from the index's one walk (`placed`)
instead of walking the function again; a module read only for summaries places its functions
when asked. Both ways must give the same nodes in the same order, with the same loops and
handlers around them, and the calls of a loop's body read from them (`loop_calls`) must be the
calls a walk of the body finds.
"""

from __future__ import annotations

import inspect
import typing
from pathlib import Path

import libcst as cst
import pytest

from helpers import FIXTURES
from tensorlint.analysis import parse_module
from tensorlint.analysis.index import PLACED_KINDS, _Indexer, build_index, placed
from tensorlint.analysis.syntax import calls_in, loop_calls
from tensorlint.analysis.walk import LEAVES, _child_fields, _field_shape

FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))
_KINDS = sorted(PLACED_KINDS, key=lambda kind: kind.__name__)


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_kept_places_are_what_a_walk_finds(fixture: Path) -> None:
    module = parse_module(fixture.read_text(encoding="utf-8"))
    kept, walked = build_index(module, keep_places=True), build_index(module, keep_places=False)
    assert len(kept.units) == len(walked.units)
    for by_index, by_walk in zip(kept.units, walked.units, strict=True):
        assert by_index.node is by_walk.node
        for kind in _KINDS:
            found, expected = placed(by_index, kind), placed(by_walk, kind)
            assert [node for node, _ in found] == [node for node, _ in expected], (by_index.name, kind)
            assert [place for _, place in found] == [place for _, place in expected], (by_index.name, kind)


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_loops_calls_are_what_a_walk_of_its_body_finds(fixture: Path) -> None:
    index = build_index(parse_module(fixture.read_text(encoding="utf-8")))
    for unit in index.units:
        for loop, _ in [*placed(unit, cst.For), *placed(unit, cst.While)]:
            assert loop_calls(unit, loop) == calls_in(loop.body), (unit.name, loop)
            outer = unit.parent
            if outer is not None:  # a loop that is not the unit's own code: walked
                assert loop_calls(outer, loop) == calls_in(loop.body)


def test_only_the_kinds_asked_for_are_kept() -> None:
    module = parse_module("def f(x):\n    return g(x)\n")
    unit = build_index(module).units[-1]
    assert [type(node) for node, _ in placed(unit, cst.Call)] == [cst.Call]
    with pytest.raises(AssertionError):
        placed(unit, cst.Name)  # never kept: a name is read where it is used


@pytest.mark.parametrize("kind", sorted(LEAVES, key=lambda kind: kind.__name__), ids=lambda kind: kind.__name__)
def test_a_leaf_has_no_code_below_it_and_no_handler(kind: type) -> None:
    """The index skips leaves without reading their children or calling a handler."""
    hints = typing.get_type_hints(kind)
    assert all(_field_shape(hints[name]) == "text" for name in _child_fields(kind))
    assert not hasattr(_Indexer, f"visit_{kind.__name__}") and not hasattr(_Indexer, f"leave_{kind.__name__}")


def test_libcsts_concrete_node_classes_have_no_subclasses() -> None:
    """The analysis writes `type(node) is cst.Name` for `isinstance(node, cst.Name)` (a failed
    `isinstance` against LibCST's ABCs runs Python code): the same answer while no concrete node
    class has a subclass. LibCST is not pinned; a version that adds one fails here."""
    concrete = [
        kind
        for kind in vars(cst).values()
        if isinstance(kind, type)
        and issubclass(kind, cst.CSTNode)
        and not inspect.isabstract(kind)
        and not kind.__name__.startswith("Base")
    ]
    assert len(concrete) > 100
    assert [kind.__name__ for kind in concrete if kind.__subclasses__()] == []
