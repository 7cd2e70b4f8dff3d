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


def _node_types(root: type) -> frozenset[type]:
    found, stack = set(), [root]
    while stack:
        kind = stack.pop()
        found.add(kind)
        stack.extend(kind.__subclasses__())
    return frozenset(found)


# LibCST's node classes are ABCs, and `isinstance` against an ABC goes through a Python-level
# `__instancecheck__`: a set of the concrete classes answers the same question many times faster.
_NODE_TYPES = _node_types(cst.CSTNode)
SCOPES = frozenset([cst.FunctionDef, cst.Lambda, cst.ClassDef])  # concrete classes: compared by type


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The child nodes that carry code, in field order (source order for bodies and arguments).
    A list, not a generator: the walks below ask for millions of them, and a list is built faster."""
    found: list[cst.CSTNode] = []
    for name in _FIELDS.get(type(node)) or _child_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind in _NODE_TYPES:
            found.append(value)
        elif kind is tuple or kind is list:
            found += [item for item in value if type(item) in _NODE_TYPES]
    return found


def walk(node: cst.CSTNode, *, into_functions: bool = True) -> Iterator[cst.CSTNode]:
    """Every node below `node`, depth first; optionally not entering defs, lambdas and classes."""
    stack = children(node)
    stack.reverse()
    while stack:
        current = stack.pop()
        yield current
        if not into_functions and type(current) in SCOPES:
            continue
        below = children(current)
        below.reverse()
        stack += below


def contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether `node` is `tree` itself or one of its descendants (by identity)."""
    return tree is node or any(inner is node for inner in walk(tree))
