"""Linting many files in one process keeps memory flat: the garbage collector's pauses and
freezes (tensorlint/analysis/parse.py) must not keep dead trees alive."""

from __future__ import annotations

import gc

from tensorlint.analysis import parse
from tensorlint.engine import lint_source

SOURCE = """\
import torch
from torch import nn


class Recorder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.seen = []

    def forward(self, x):
        h = self.fc(x)
        self.seen.append(h)
        return h
"""


def _tracked() -> int:
    return len(gc.get_objects()) + gc.get_freeze_count()


def test_collector_state_is_restored_and_dead_trees_are_freed() -> None:
    assert gc.isenabled()
    lint_source(SOURCE)  # warm up: imports, caches
    before = _tracked()
    for _ in range(200):
        assert [f.code for f in lint_source(SOURCE)] == ["TL001"]
        assert gc.isenabled()
    # Every tree made above is garbage now: what is left is caches, not a tree per call (one
    # tree of this module is about 1,500 objects).
    assert _tracked() - before < 1_500


def test_a_pause_inside_a_pause_leaves_the_collector_off_until_the_outer_one_ends() -> None:
    with parse.gc_paused():
        with parse.gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_modules_the_project_drops_are_freed(tmp_path) -> None:
    # Imported modules stay analysed (and frozen) while the project keeps them; one that it
    # drops must still be freed, by the periodic full collection.
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
    project = Project(capacity=1)  # each file evicts the module the other one imported

    def lint(index: int) -> None:
        user = users[index % 2]
        lint_source(user.read_text(), str(user), project=project)

    lint(0)
    lint(1)
    before = _tracked()
    for index in range(40):  # 40 modules dropped: a full collection after each
        lint(index)
    assert _tracked() - before < 1_500
