"""A fast walk over LibCST trees.

LibCST's visitors and `node.children` rebuild each node's children through a visitor, which
costs more than parsing. The analysis only reads the tree, so it walks the dataclass fields
directly and skips the ones that only hold whitespace and punctuation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

_SKIPPED_FIELDS = frozenset(
    [
        "lpar",
        "rpar",
        "comma",
        "semicolon",
        "dot",
        "equal",
        "colon",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "leading_lines",
        "lines_after_decorators",
        "header",
        "footer",
        "trailing_whitespace",
        "asynchronous",
        "star",
        "whitespace",
        "first_line",
        "empty_lines",
        "newline",
        "indent",
    ]
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(kind)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
        _FIELDS[kind] = names
    return names


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The child nodes that carry code, in field order (source order for bodies and arguments)."""
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


def walk(node: cst.CSTNode, *, into_functions: bool = True) -> Iterator[cst.CSTNode]:
    """Every node below `node`, depth first; optionally not entering defs, lambdas and classes."""
    stack = list(children(node))
    stack.reverse()
    while stack:
        current = stack.pop()
        yield current
        if not into_functions and isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        below = list(children(current))
        below.reverse()
        stack.extend(below)
