"""Which code to run for each finding, decided from the source alone (no torch, no execution).

A finding in a method of an nn.Module class: build the class and run train steps. In a function
without required arguments: call it, or, when the finding sits in a loop, call it once and
sample each iteration. TL003 (DataLoader workers) and TL013 (CUDA initialised before they fork):
run a function that iterates the loader. Code that cannot be driven itself (a method of a plain
class, a function with required arguments, a `collate_fn`) is driven through a function of the
file without required arguments that reaches it, by name, through the file's own functions and
classes (for TL003: one that reaches both the flagged code and a `DataLoader`). Anything else
needs a spec and is reported as inconclusive, never guessed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tensorlint.findings import Finding

_Def = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOADER_CODES = frozenset(["TL003", "TL013"])  # verified by iterating the DataLoader: what its workers ask of CUDA


@dataclass(frozen=True)
class Plan:
    """A job for the subprocess, or the reason there is none; `label` names what runs."""

    label: str
    job: dict[str, Any] | None = None
    reason: str = ""
    findings: list[Finding] = field(default_factory=list, compare=False)

    @property
    def key(self) -> str:
        return repr(sorted(self.job.items())) if self.job else f"{self.label}: {self.reason}"


@dataclass(frozen=True)
class Options:
    target: str | None = None  # FILE::TARGET
    entry: str | None = None  # `name` in the file, or `package.module:callable`
    specs: dict[str, dict[str, Any]] = field(default_factory=dict)  # "file.py::Name" -> init/inputs/mode/calls
    calls: int = 20
    warmup: int = 3
    device: str = "auto"


def plan(path: Path, source: str, findings: list[Finding], options: Options) -> list[Plan]:
    """One plan per distinct job, each with the findings it verifies, in finding order."""
    tree = ast.parse(source)
    tops = {node.name: node for node in tree.body if isinstance(node, (ast.ClassDef, *_Def))}
    modules = _module_classes(tree)
    if options.target is not None and options.target not in tops:
        return [Plan(f"{path}::{options.target}", reason=f"needs a spec: no class or function {options.target!r}")]
    plans: dict[str, Plan] = {}
    callers = _Callers(tree)
    for finding in findings:
        top = _top_level(tree, finding.location.row)
        inside_target = top is not None and top.name == options.target
        if options.target is not None and not inside_target and finding.code not in _LOADER_CODES:
            continue
        made = _plan_for(path, finding, top, modules, options)
        if made.job is None and options.target is None and options.entry is None:
            made = callers.drive(path, finding, top, options) or made
        plans.setdefault(made.key, made).findings.append(finding)
    if options.target is not None and not any(f for p in plans.values() for f in p.findings):
        made = _drive(path, tops[options.target], modules, options, None)
        plans[made.key] = made
    return list(plans.values())


def _plan_for(path: Path, finding: Finding, top: ast.AST | None, modules: set[str], options: Options) -> Plan:
    if finding.code in _LOADER_CODES:
        # The flagged code runs inside DataLoader workers (TL003), or makes them fail (TL013, in
        # the function that builds and iterates the loader): drive what iterates the loader.
        entry = options.target or options.entry
        if entry is None and finding.code == "TL013" and isinstance(top, _Def) and not _required(top):
            entry = top.name if "DataLoader" in _names(top) else None
        if entry is None:
            return Plan(
                "DataLoader workers",
                reason="needs a spec: name the function that iterates the DataLoader (FILE::NAME or --entry)",
            )
        return Plan(f"{entry}() iterating its DataLoader", _job(path, entry, "loader", options))
    made = _drive(path, top, modules, options, finding.location.row) if top is not None else None
    if (made is None or made.job is None) and options.entry is not None:
        return Plan(f"{options.entry}()", _job(path, options.entry, "call", options))
    if made is None:
        return Plan("module-level code", reason="needs a spec: module-level code; name an entry (--entry)")
    return made


def _drive(path: Path, top: ast.AST, modules: set[str], options: Options, row: int | None) -> Plan:
    if isinstance(top, ast.ClassDef):
        if top.name not in modules:
            return Plan(top.name, reason=f"needs a spec: {top.name} is not an nn.Module; name an entry (--entry)")
        spec = _spec(path, top.name, options)
        mode = spec.get("mode", "train")
        return Plan(f"{top.name} ({mode} step)", _job(path, top.name, "module", options))
    assert isinstance(top, _Def)
    required = _required(top)
    if required:
        return Plan(f"{top.name}()", reason=f"needs a spec: {top.name}() requires {', '.join(required)}")
    if row is not None and _in_loop(top, row):
        return Plan(f"{top.name}() per loop iteration", {**_job(path, top.name, "loop", options), "line": row})
    return Plan(f"{top.name}()", _job(path, top.name, "call", options))


def _job(path: Path, name: str, kind: str, options: Options) -> dict[str, Any]:
    where: dict[str, Any] = {"file": str(path.resolve())}
    if ":" in name:
        module, name = name.split(":", 1)
        where = {"module": module}
    job = {"kind": kind, **where, "name": name, "calls": options.calls, "warmup": options.warmup}
    job["device"] = options.device
    job.update(_spec(path, name, options))
    return job


def _spec(path: Path, name: str, options: Options) -> dict[str, Any]:
    for key, spec in options.specs.items():
        file, _, target = key.rpartition("::")
        if target == name and path.as_posix().endswith(file):
            return dict(spec)
    return {}


def _top_level(tree: ast.Module, row: int) -> ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, *_Def)) and node.lineno <= row <= (node.end_lineno or node.lineno):
            return node
    return None


def _module_classes(tree: ast.Module) -> set[str]:
    """Classes of the file that derive from something named `*Module` (directly or through one another)."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name not in found:
                names = {ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases}
                if any(n.endswith("Module") for n in names) or names & found:
                    found.add(node.name)
                    changed = True
    return found


class _Callers:
    """Which top-level functions without required arguments reach which names of the file."""

    def __init__(self, tree: ast.Module) -> None:
        self.tops = {n.name: n for n in tree.body if isinstance(n, (ast.ClassDef, *_Def))}
        self.refs = {name: _names(node) for name, node in self.tops.items()}
        self.drivers = [n for n in self.tops.values() if isinstance(n, _Def) and not _required(n)]

    def reached(self, start: str) -> set[str]:
        """Every name referenced from `start`, through the file's functions and classes it names."""
        seen, todo, names = {start}, [start], set()
        while todo:
            for name in self.refs[todo.pop()]:
                names.add(name)
                if name in self.tops and name not in seen:
                    seen.add(name)
                    todo.append(name)
        return names

    def drive(self, path: Path, finding: Finding, top: ast.AST | None, options: Options) -> Plan | None:
        goals = _goals(top, finding.location.row)
        if not goals:
            return None
        for driver in self.drivers:
            if driver is top:
                continue
            reached = self.reached(driver.name)
            if not goals & reached:
                continue
            if finding.code in _LOADER_CODES:
                if "DataLoader" in reached:
                    return Plan(f"{driver.name}() iterating its DataLoader", _job(path, driver.name, "loader", options))
                continue
            target = sorted(goals)[0]
            line = _call_in_loop(driver, goals)
            if line is not None:
                job = {**_job(path, driver.name, "loop", options), "line": line}
                return Plan(f"{driver.name}() per loop iteration, calling {target}", job)
            return Plan(f"{driver.name}(), calling {target}", _job(path, driver.name, "call", options))
        return None


def _names(node: ast.AST) -> set[str]:
    """Names and attribute names a definition uses (`manager.release_all()` uses `release_all`)."""
    found = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif isinstance(child, ast.Attribute):
            found.add(child.attr)
    return found


def _goals(top: ast.AST | None, row: int) -> set[str]:
    """The names by which code reaches the flagged line: its function, or its class for a dunder method."""
    if isinstance(top, _Def):
        return {top.name}
    if isinstance(top, ast.ClassDef):
        for node in top.body:
            if isinstance(node, _Def) and node.lineno <= row <= (node.end_lineno or node.lineno):
                dunder = node.name.startswith("__") and node.name.endswith("__")
                return {top.name} if dunder else {node.name}
        return {top.name}
    return set()


def _call_in_loop(driver: ast.FunctionDef | ast.AsyncFunctionDef, goals: set[str]) -> int | None:
    """The line of a call to a goal inside a loop of the driver: sampled per iteration."""
    for node in ast.walk(driver):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in goals and _in_loop(driver, node.lineno):
                return node.lineno
    return None


def _required(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    without_default = positional[: len(positional) - len(args.defaults)]
    keyword_only = [a for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=False) if d is None]
    return [a.arg for a in [*without_default, *keyword_only]]


def _in_loop(function: ast.AST, row: int) -> bool:
    """Is `row` inside a for/while loop of this function (not of a nested function)?"""
    for node in ast.iter_child_nodes(function):
        if isinstance(node, (*_Def, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and node.lineno < row <= (node.end_lineno or 0):
            return True
        if _in_loop(node, row):
            return True
    return False
