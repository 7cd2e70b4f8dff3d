"""The nodes the index keeps for each function, with their places, are what a walk finds.

The rules and the flow pass read a function's own nodes from the index's one walk (`placed`)
instead of walking the function again; a module read only for summaries places its functions
when asked. Both ways must give the same nodes in the same order, with the same loops and
handlers around them, and the calls of a loop's body read from them (`loop_calls`) must be the
calls a walk of the body finds.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from helpers import FIXTURES
from tensorlint.analysis import parse_module
from tensorlint.analysis.index import build_index, placed
from tensorlint.analysis.syntax import calls_in, loop_calls

FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))
_KINDS = (cst.Call, cst.Assign, cst.AugAssign, cst.For, cst.While, cst.If, cst.Return, cst.Name, cst.Lambda)


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
