"""A fast walk over LibCST trees.

LibCST's visitors and `node.children` rebuild each node's children through a visitor, which
costs more than parsing. The analysis only reads the tree, so it walks the dataclass fields
directly and skips the ones that only hold whitespace and punctuation.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import typing
from collections.abc import Callable, Iterator

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


def _child_fields(kind: type) -> tuple[str, ...]:
    return tuple(
        f.name
        for f in dataclasses.fields(kind)
        if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
    )


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
# Nodes with no code below them: names and literals, four in ten of a tree's nodes.
LEAVES = frozenset(
    [
        *(cst.Name, cst.SimpleString, cst.FormattedStringText, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis),
        *(cst.Pass, cst.Break, cst.Continue),
    ]
)


def _reader(kind: type) -> Callable[[cst.CSTNode], list[cst.CSTNode]]:
    """A function that lists a `kind` node's children, written from the class's field types: a
    field that always holds a node is read as is, a sequence of nodes is added whole, a field
    that may hold None, a sentinel or either is checked, and text fields are not read."""
    hints = typing.get_type_hints(kind)
    lines = []
    for name in _child_fields(kind):
        shape = _field_shape(hints[name])
        if shape == "node":
            lines.append(f" found.append(node.{name})")
        elif shape == "nodes":
            lines.append(f" found += node.{name}")
        elif shape != "text":
            lines.append(f" value = node.{name}")
            lines.append(" if type(value) in _node_types: found.append(value)")
            if shape == "node or nodes":
                lines.append(" elif type(value) in _sequences: found += [i for i in value if type(i) in _node_types]")
    source = "def read(node):\n found = []\n" + "\n".join(lines) + "\n return found\n"
    namespace: dict[str, object] = {"_node_types": _NODE_TYPES, "_sequences": (tuple, list)}
    exec(source, namespace)  # the text above, made from the dataclass's own field types
    return namespace["read"]  # type: ignore[return-value]


def _field_shape(hint: object) -> str:
    """`node` (always a node), `nodes` (a sequence of nodes), `maybe` (a node or None or a
    sentinel), `node or nodes` (`from x import *` or a sequence of names) or `text`."""
    if isinstance(hint, type):
        return "node" if issubclass(hint, cst.CSTNode) else "text"
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin is collections.abc.Sequence:
        inner = typing.get_args(arguments[0]) if typing.get_origin(arguments[0]) is typing.Union else arguments
        return "nodes" if all(isinstance(a, type) and issubclass(a, cst.CSTNode) for a in inner) else "node or nodes"
    if any(typing.get_origin(a) is collections.abc.Sequence for a in arguments):
        return "node or nodes"
    return "maybe"


class _Readers(dict[type, Callable[[cst.CSTNode], list[cst.CSTNode]]]):
    def __missing__(self, kind: type) -> Callable[[cst.CSTNode], list[cst.CSTNode]]:
        read = self[kind] = _reader(kind)
        return read


_READERS = _Readers()


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The child nodes that carry code, in field order (source order for bodies and arguments).
    A new list, not a generator: the walks below ask for millions of them, and a list is built faster."""
    return _READERS[type(node)](node)


def walk(node: cst.CSTNode, *, into_functions: bool = True) -> Iterator[cst.CSTNode]:
    """Every node below `node`, depth first; optionally not entering defs, lambdas and classes."""
    stack = children(node)
    stack.reverse()
    while stack:
        current = stack.pop()
        yield current
        if type(current) in LEAVES or (not into_functions and type(current) in SCOPES):
            continue
        below = children(current)
        below.reverse()
        stack += below


def contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether `node` is `tree` itself or one of its descendants (by identity)."""
    return tree is node or any(inner is node for inner in walk(tree))


def same_code(a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """Whether two trees are the same code however it is written. LibCST's `deep_equals` also
    compares spaces, parentheses and quotes, which the trees built from `ast` do not keep
    (`from_ast.py`): a verdict resting on it would change with the formatting, and between a
    file's first analysis and its second (`d["k"] = cat([d['k'], x])`)."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind in LEAVES:
        return _spelling(a) == _spelling(b)
    if _written_differently(a, b):
        return False
    below_a, below_b = children(a), children(b)
    return len(below_a) == len(below_b) and all(same_code(x, y) for x, y in zip(below_a, below_b, strict=True))


def _spelling(leaf: cst.CSTNode) -> object:
    """What a leaf means: a literal's value (`'k'` is `"k"`, `0x10` is `16`), a name's text."""
    if isinstance(leaf, (cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary)):
        return leaf.evaluated_value
    return getattr(leaf, "value", None)  # a name, an f-string's text; None for `...`, `pass`


def _written_differently(a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """The few text fields outside the leaves that change what the code means: `*args` against
    `args`, `async for` against `for`, `rf"..."` against `f"..."`."""
    star_a, star_b = getattr(a, "star", ""), getattr(b, "star", "")
    if isinstance(star_a, str) and isinstance(star_b, str) and star_a != star_b:
        return True
    if (getattr(a, "asynchronous", None) is None) != (getattr(b, "asynchronous", None) is None):
        return True
    start_a, start_b = getattr(a, "start", None), getattr(b, "start", None)
    return isinstance(start_a, str) and start_a.rstrip("'\"").lower() != str(start_b).rstrip("'\"").lower()
