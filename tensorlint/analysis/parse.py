"""Parsing with LibCST, made cheaper for trees that are only read.

Two costs of `libcst.parse_module` buy nothing for a tree the parser itself built:
- every node's `__post_init__` validates it (for nodes that users construct by hand): a third
  of the parse time;
- the cyclic garbage collector runs over and over while about a million long-lived nodes are
  allocated, and never finds garbage among them.
So the parser runs with both turned off, and the engine keeps the collector off for the whole
of a file (`gc_paused`). Trees that rules build for fixes are still validated: validation is
off only while the parser runs.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst
from libcst._nodes.base import CSTNode  # the class whose __post_init__ validates each node


def _no_validation(self: CSTNode) -> None:
    return None


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside: tree building and analysis allocate much and free little.

    Leaving the outermost pause, one collection of the young generations frees the cyclic
    garbage the file left behind (the tree itself is freed by reference counting, see
    `ModuleIndex.release`); without it, the next automatic collections would walk the trees
    of the project's analysed modules more often.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
            gc.collect(1)


def parse_module(source: str) -> cst.Module:
    """`libcst.parse_module`, without validating the parser's own nodes or collecting garbage."""
    validate = CSTNode.__dict__["__post_init__"]
    CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
    try:
        with gc_paused():
            return cst.parse_module(source)
    finally:
        CSTNode.__post_init__ = validate  # type: ignore[method-assign]
