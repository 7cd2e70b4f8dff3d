"""The package's shape, read from its imports with `ast`: no import cycle, rules use only the
analysis's front door and the rule base, and no private name is used outside its module.

Imports inside functions count: they run too, and they are how a cycle hides. Imports under
`if TYPE_CHECKING:` do not: they never run (every module has `from __future__ import
annotations`), so they cannot make an import fail or a module depend on another at run time;
they name a type for mypy, as `Facts.project` names the `Project` that keeps it.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import tensorlint.analysis

PACKAGE = Path(__file__).resolve().parents[1] / "tensorlint"


@dataclass(frozen=True)
class Import:
    importer: str  # the module that imports, e.g. `tensorlint.cli`
    module: str  # the module it imports: `tensorlint.analysis` for `from tensorlint.analysis import Facts`
    names: tuple[str, ...]  # what a `from` import takes from it; () for `import module`
    line: int

    @property
    def where(self) -> str:
        return f"{self.importer}:{self.line}"


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, *, type_checking: bool = False) -> list[Import]:
    """The module's imports, wherever they are; those under `if TYPE_CHECKING:` only when asked."""
    return sorted(_imports(name, path, type_checking), key=lambda item: item.line)


def _imports(name: str, path: Path, type_checking: bool) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if not type_checking and isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the importer's package, one level up per extra dot
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parent, base] if base else parent)
            yield Import(name, base, tuple(alias.name for alias in node.names), node.lineno)


def bound_names(path: Path) -> set[str]:
    """The names a module binds at its top level: `from .walk import walk` makes `walk` the function."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).partition(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)}
    return names


def internal(item: Import, known: dict[str, Path]) -> list[Import]:
    """An import of tensorlint, by the modules it takes: `from package import module` takes the module."""
    if item.module != "tensorlint" and not item.module.startswith("tensorlint."):
        return []
    bound = bound_names(known[item.module]) if item.module in known else set()
    submodules = [f"{item.module}.{n}" for n in item.names if f"{item.module}.{n}" in known and n not in bound]
    rest = tuple(n for n in item.names if f"{item.module}.{n}" not in submodules)
    found = [Import(item.importer, module, (), item.line) for module in submodules]
    if rest or not item.names:
        found.append(Import(item.importer, item.module, rest, item.line))
    return found


def internal_imports() -> list[Import]:
    """Every import of one tensorlint module by another (outside `if TYPE_CHECKING:`)."""
    known = modules()
    return [found for name, path in known.items() for item in imports(name, path) for found in internal(item, known)]


def cycles(edges: dict[str, set[str]]) -> list[tuple[list[str], list[str]]]:
    """Each strongly connected group of modules (Tarjan), sorted, with one cycle through it as a
    path that returns to its start."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in order:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], order[nxt])
        if low[node] == order[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in edges.get(node, ()):
                groups.append(group)

    for node in sorted(edges):
        if node not in order:
            visit(node)
    return [(_path_within(group, edges), sorted(group)) for group in groups]


def _path_within(group: list[str], edges: dict[str, set[str]]) -> list[str]:
    """A path from the group's first module back to itself, through the group only."""
    start, members = min(group), set(group)
    paths = {start: [start]}
    todo = [start]
    while todo:
        node = todo.pop(0)
        for nxt in sorted(edges.get(node, set()) & members):
            if nxt == start:
                return [*paths[node], start]
            if nxt not in paths:
                paths[nxt] = [*paths[node], nxt]
                todo.append(nxt)
    return [start, start]


def test_the_package_has_no_import_cycle() -> None:
    edges: dict[str, set[str]] = {}
    for item in internal_imports():
        if item.module != item.importer:
            edges.setdefault(item.importer, set()).add(item.module)
    found = [f"{' -> '.join(path)} (the modules tangled: {', '.join(group)})" for path, group in cycles(edges)]
    assert not found, "import cycles (imports inside functions count):\n" + "\n".join(found)


def test_the_cycle_finder_names_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(edges) == [(["a", "b", "c", "a"], ["a", "b", "c"]), (["e", "e"], ["e"])]


def test_no_private_name_is_imported_from_another_module() -> None:
    private = [
        f"{item.where}: {item.module}" + (f" import {', '.join(item.names)}" if item.names else "")
        for item in internal_imports()
        if item.module != item.importer
        and any(part.startswith("_") and not part.startswith("__") for part in (*item.module.split("."), *item.names))
    ]
    assert not private, "private names used outside their module:\n" + "\n".join(private)


def test_no_private_attribute_of_another_tensorlint_module_is_read() -> None:
    """`cli._fix_file`, read through an imported module, is as private as `from cli import _fix_file`."""
    known = modules()
    found = []
    for name, path in known.items():
        aliases = {}  # local name -> tensorlint module it is bound to
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                aliases.update({a.asname: a.name for a in node.names if a.asname and a.name in known})
            elif isinstance(node, ast.ImportFrom) and node.module in known:
                for a in node.names:
                    if f"{node.module}.{a.name}" in known:
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and aliases.get(node.value.id, name) != name
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                found.append(f"{name}:{node.lineno}: {aliases[node.value.id]}.{node.attr}")
    assert not found, "private names used outside their module:\n" + "\n".join(found)


# What a rule may import from tensorlint: the analysis's public names and the rule base.
RULE_API = {"tensorlint.analysis", "tensorlint.rule"}
# TL900 judges tensorlint's own suppression comments after every other rule has run: the engine hands
# it the findings and the suppressions, which are not facts of the analysed code.
RULE_EXCEPTIONS = {"tensorlint.rules.tl900_unused_noqa": {"tensorlint.findings", "tensorlint.noqa", "tensorlint.rules"}}


def test_rules_import_only_the_analysis_front_door_and_the_rule_base() -> None:
    known = modules()
    public = set(tensorlint.analysis.__all__)
    rules = {name: path for name, path in known.items() if name.startswith("tensorlint.rules.tl")}
    assert len(rules) >= 10
    wrong = []
    for name, path in rules.items():
        allowed = RULE_API | RULE_EXCEPTIONS.get(name, set())
        for item in imports(name, path, type_checking=True):
            top = item.module.partition(".")[0]
            if top != "tensorlint":
                if top not in sys.stdlib_module_names and top != "libcst":
                    wrong.append(f"{item.where}: {item.module} (rules use the standard library and libcst only)")
                continue
            for taken in internal(item, known):
                if taken.module not in allowed:
                    wrong.append(
                        f"{item.where}: {taken.module} (import it from tensorlint.analysis or tensorlint.rule)"
                    )
                elif taken.module == "tensorlint.analysis" and not set(taken.names) <= public:
                    hidden = ", ".join(sorted(set(taken.names) - public))
                    wrong.append(f"{item.where}: {hidden} is not in tensorlint.analysis.__all__")
    assert not wrong, "rules reach past the analysis's front door:\n" + "\n".join(wrong)


def test_every_module_says_what_it_is_for() -> None:
    silent = [name for name, path in modules().items() if not ast.get_docstring(ast.parse(path.read_text("utf-8")))]
    assert not silent, "modules without a docstring (a purpose line):\n" + "\n".join(silent)
