"""Linting many files in one process keeps memory flat: with the garbage collector paused
while a file is analysed (tensorlint/analysis/parse.py), no tree may outlive its file."""

from __future__ import annotations

import gc

from samples import CACHE
from tensorlint.analysis import parse
from tensorlint.analysis.walk import _NODE_TYPES as NODE_TYPES
from tensorlint.engine import lint_source


def _tracked() -> int:
    gc.collect()
    return len(gc.get_objects())


def test_collector_state_is_restored_and_dead_trees_are_freed() -> None:
    assert gc.isenabled()
    lint_source(CACHE)  # warm up: imports, caches
    before = _tracked()
    for _ in range(200):
        assert [f.code for f in lint_source(CACHE)] == ["TL001"]
        assert gc.isenabled()
    # Every tree made above is garbage now: what is left is caches, not a tree per call (one
    # tree of this module is about 1,500 objects).
    assert _tracked() - before < 1_500


def test_a_linted_files_tree_is_freed_by_reference_counting() -> None:
    # Its facts' reference cycles are broken (ModuleIndex.release): the cyclic collector need
    # not walk a dead tree of a million nodes to free it.
    lint_source(CACHE)
    gc.collect()
    gc.disable()
    try:
        before = sum(type(o) in NODE_TYPES for o in gc.get_objects())
        for _ in range(5):
            lint_source(CACHE)
        assert sum(type(o) in NODE_TYPES for o in gc.get_objects()) - before < 50
    finally:
        gc.enable()


def test_a_pause_inside_a_pause_leaves_the_collector_off_until_the_outer_one_ends() -> None:
    with parse.gc_paused():
        with parse.gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_modules_the_project_drops_are_freed(tmp_path) -> None:
    # Imported modules stay analysed while the project keeps them; one that it drops is freed.
    from tensorlint.analysis.project import Project

    for name in ("alpha", "beta"):
        (tmp_path / f"{name}.py").write_text(f"import torch\n\n\ndef {name}(x):\n    return x * 2\n")
    users = []
    for name in ("alpha", "beta"):
        user = tmp_path / f"use_{name}.py"
        user.write_text(
            f"import torch\nfrom {name} import {name}\n\n\ndef f(batches):\n    total = 0\n"
            f"    for x in batches:\n        total += {name}(x)\n    return total\n"
        )
        users.append(user)
    project = Project(capacity_bytes=1)  # each file evicts the module the other one imported

    def lint(index: int) -> None:
        user = users[index % 2]
        lint_source(user.read_text(), str(user), project=project)

    lint(0)
    lint(1)
    before = _tracked()
    for index in range(40):  # 40 modules dropped
        lint(index)
    assert _tracked() - before < 1_500
