"""Parsing with LibCST, made cheaper for trees that are only read.

Two costs of `libcst.parse_module` buy nothing for a tree the parser itself built:
- every node's `__post_init__` validates it (for nodes that users construct by hand): a third
  of the parse time;
- the cyclic garbage collector runs over and over while about a million long-lived nodes are
  allocated, and never finds garbage among them.
So the parser runs with both turned off, and the garbage collector runs once per file. Trees that rules build for fixes are still validated:
validation is off only while the parser runs.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst
from libcst._nodes.base import CSTNode  # the class whose __post_init__ validates each node


def _no_validation(self: CSTNode) -> None:
    return None


_full_collection_due = False


def request_full_collection() -> None:
    """Have the next pause end with a collection of everything, frozen objects included: trees
    that were alive when frozen and are garbage now (modules the project dropped) are freed."""
    global _full_collection_due
    _full_collection_due = True


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside: tree building and analysis allocate much and free little.

    Leaving the outermost pause, one collection of the young generations frees what the file
    left behind, and what survives (the project's analysed modules, caches) is frozen out of
    later collections, which would otherwise walk those trees again and again (a fifth of the
    run time on a real tree). See `request_full_collection` for what frozen garbage costs.
    """
    global _full_collection_due
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
            if _full_collection_due:
                _full_collection_due = False
                gc.unfreeze()
                gc.collect()
            else:
                gc.collect(1)
            gc.freeze()


def parse_module(source: str) -> cst.Module:
    """`libcst.parse_module`, without validating the parser's own nodes or collecting garbage."""
    validate = CSTNode.__dict__["__post_init__"]
    CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
    try:
        with gc_paused():
            return cst.parse_module(source)
    finally:
        CSTNode.__post_init__ = validate  # type: ignore[method-assign]
