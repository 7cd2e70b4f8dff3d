"""Names: resolving imports and aliases in one pass, and small CST helpers."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis.walk import children


class Imports:
    """Maps the local names that a module binds by import to qualified names.

    `import torch as th` binds `th` to `torch`; `from torch import nn` binds `nn` to
    `torch.nn`. Imports anywhere in the file count: a linter that is wrong about a shadowed
    import in one function is rarely wrong about what `nn` means in the file.
    """

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        # `from .utils import AverageMeter`: kept apart, since `qualify` answers for absolute names
        self.relative: dict[str, str] = {}
        self.starred: list[str] = []  # `from jtnn import *`: modules that may bind any other name
        self.modules: set[str] = set()  # names an `import` statement binds: `torch`, `np` of `import numpy as np`

    def add(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name)
                if full is None:
                    continue
                if alias.asname is not None:
                    local = _as_name(alias.asname)
                    if local:
                        self.aliases[local] = full
                        self.modules.add(local)
                else:
                    top = full.split(".")[0]
                    self.aliases[top] = top
                    self.modules.add(top)
            return
        dots = "." * len(node.relative)
        base = dotted_name(node.module) if node.module is not None else ""
        if base is None or not (base or dots):
            return
        if isinstance(node.names, cst.ImportStar):
            self.starred.append(f"{dots}{base}")
            return
        target = self.relative if dots else self.aliases
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = _as_name(alias.asname) if alias.asname is not None else name
            if local:
                target[local] = f"{dots}{base}.{name}" if base else f"{dots}{name}"

    def is_module(self, name: str) -> bool:
        """Whether `name` is a module (`torch.add(a, b)` is no set's `add`): bound by an `import`
        statement, or `torch` in a snippet that uses it without importing it (as `qualify` reads it)."""
        return name in self.modules or (name == "torch" and name not in self.aliases and name not in self.relative)

    def origin(self, name: str) -> str | None:
        """Where an imported name comes from: `utils.AverageMeter`, `.utils.AverageMeter`; for a
        name reached through an imported module (`lib.Trainer` after `from pkg import lib`), where
        that module comes from, with the rest: `pkg.lib.Trainer`."""
        head, _, rest = name.partition(".")
        found = self.aliases.get(head) or self.relative.get(head)
        return f"{found}.{rest}" if found is not None and rest else found

    def through_module(self, expr: cst.BaseExpression) -> str | None:
        """`lib.Trainer` or `utils.meters.AverageMeter`: a name reached through an imported module
        that may be one of the project's (torch's own names mean what the analysis's tables say;
        the standard library's are no project's)."""
        dotted = dotted_name(expr)
        if dotted is None or "." not in dotted:
            return None
        origin = self.origin(dotted.partition(".")[0])
        if origin is None:
            return None
        if origin.startswith("."):
            return dotted  # a module of the importer's package, whatever its name
        top = origin.partition(".")[0]
        return dotted if top != "torch" and top not in sys.stdlib_module_names else None

    def qualify(self, expr: cst.BaseExpression) -> str | None:
        """The qualified name of `a.b.c` when `a` is an imported name, else None."""
        head = expr
        while type(head) is cst.Attribute:  # most calls are of no imported name: told before joining
            head = head.value
        if type(head) is not cst.Name:
            return None
        target = self.aliases.get(head.value)
        if target is None and head.value == "torch":
            target = "torch"  # a snippet that uses torch without importing it still means torch
        if target is None:
            return None
        rest = (dotted_name(expr) or "").partition(".")[2]
        return f"{target}.{rest}" if rest else target


def _as_name(asname: cst.AsName) -> str | None:
    return asname.name.value if type(asname.name) is cst.Name else None


def dotted_name(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of names and attributes, else None."""
    parts: list[str] = []
    while type(expr) is cst.Attribute:  # by type: isinstance against LibCST's ABCs is slow
        parts.append(expr.attr.value)
        expr = expr.value
    if type(expr) is not cst.Name:
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))


def callee_name(call: cst.Call) -> str | None:
    """The last name of what is called: `append` for `self.x.append(...)`."""
    func = call.func
    if type(func) is cst.Attribute:
        return func.attr.value
    if type(func) is cst.Name:
        return func.value
    return None


def receiver(call: cst.Call) -> cst.BaseExpression | None:
    """`self.x` for `self.x.append(...)`; None for a plain function call."""
    return call.func.value if type(call.func) is cst.Attribute else None


def argument(call: cst.Call, keyword: str, position: int | None = None) -> cst.BaseExpression | None:
    """The value passed as `keyword=` or, failing that, at a positional index."""
    positional = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg.value
        elif arg.star:
            return None  # *args hides the positions that follow
        else:
            if position is not None and positional == position:
                return arg.value
            positional += 1
    return None


def names_in(node: cst.CSTNode) -> set[str]:
    """Every name loaded in an expression, not looking into lambdas."""
    return {name for name in _loads(node) if "." not in name}


def references(node: cst.CSTNode) -> set[str]:
    """Every name and attribute chain read in an expression: `self.losses`, `total`, `torch.stack`."""
    found: set[str] = set()
    for name in _loads(node, chains=True):
        found.add(name)
        found.add(name.split(".")[0])
    return found


def _loads(node: cst.CSTNode, *, chains: bool = False) -> Iterator[str]:
    """Names read in `node` (with `chains`, whole `a.b.c` chains), not entering lambdas."""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:
            yield current.value
        elif type(current) is cst.Attribute:
            dotted = dotted_name(current) if chains else None
            if dotted is not None:
                yield dotted
            else:
                stack.append(current.value)  # `x.name` reads x, not `name`
        elif type(current) is cst.Arg:
            stack.append(current.value)  # keyword names are not reads
        elif type(current) is not cst.Lambda:
            stack.extend(children(current))


_LITERALS = frozenset([cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString])


def is_literal(expr: cst.BaseExpression) -> bool:
    return type(expr) in _LITERALS or (type(expr) is cst.Name and expr.value in ("None", "True", "False"))


def string_value(expr: cst.BaseExpression) -> str | None:
    """The text of a plain string literal, or the literal head of an f-string."""
    if type(expr) is cst.SimpleString:
        text = expr.value
        if "\\" not in text and text[0] in "'\"":  # no prefix, no escape: the text between the quotes
            quotes = 3 if text[:3] in ('"""', "'''") and len(text) >= 6 else 1
            return text[quotes:-quotes]
        try:  # `evaluated_value` parses the literal with Python's parser: slow, and asked often
            value = expr.evaluated_value
        except Exception:
            return None
        return value if isinstance(value, str) else None
    if type(expr) is cst.FormattedString and expr.parts:
        head = expr.parts[0]
        if type(head) is cst.FormattedStringText:
            return head.value
    return None


def class_word(class_name: str) -> str:
    """The last word of a class's name, for the objects named for it: `EmbeddingTracker` ->
    "tracker", `AverageMeter` -> "meter", `RNNState` -> "state"."""
    words = class_words(class_name)
    return words[-1] if words else class_name.lower()


def steps_an_optimizer(call: cst.Call) -> bool:
    """`optimizer.step()`, `self.opt.step()`, `scaler.step(optimizer)`: a parameter update."""
    if callee_name(call) != "step" or type(call.func) is not cst.Attribute:
        return False
    owner = (dotted_name(call.func.value) or "").lower()
    return "scaler" in owner or (not call.args and ("optim" in owner or owner.rsplit(".", 1)[-1] == "opt"))


def names_data_statistics(class_name: str) -> bool:
    """A class named for the running statistics of what it is fed, kept to normalise it:
    `RunningMeanStd`, `RunningMoments`, `RMSRescaler`, `ObsNormalizer`. Training code feeds such
    a class observations, rewards and returns: data, not a step's outputs."""
    words = class_words(class_name)
    return (
        bool({"rms", "moments"} & set(words))
        or ("mean" in words and ("std" in words or "var" in words))
        or any(w.startswith(("normaliz", "normalis", "rescal", "standardiz", "whiten")) for w in words)
    )


def class_words(class_name: str) -> list[str]:
    """`SimpleLossCompute` -> ["simple", "loss", "compute"], `RNNState` -> ["rnn", "state"]."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", class_name)]


def literal_bool(expr: cst.BaseExpression) -> bool | None:
    """`True` or `False` written as such; None for anything else."""
    if type(expr) is cst.Name and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def grad_mode_of(expr: cst.BaseExpression) -> bool | None:
    """The grad mode inside `with expr:` or under `@expr`, by the name called (`grad_mode_set_by`)."""
    call = expr if type(expr) is cst.Call else None
    name = (dotted_name(call.func if call is not None else expr) or "").rsplit(".", 1)[-1]
    argument = literal_bool(call.args[0].value) if call is not None and call.args else None
    mode = grad_mode_set_by(name, argument, call is not None and bool(call.args))
    return mode if mode is not None or call is None else grad_mode_asked(keyword_bools(call))


def keyword_bools(call: cst.Call) -> list[tuple[str, bool | None]]:
    """The keywords of a call, with their literal booleans (None for anything else)."""
    return [(arg.keyword.value, literal_bool(arg.value)) for arg in call.args if arg.keyword is not None]


def grad_mode_asked(keywords: list[tuple[str, bool | None]]) -> bool | None:
    """`with eval_mode(net, no_grad=True):`: a context manager (the project's own, read by name only)
    asked by keyword to turn gradients off."""
    return False if ("no_grad", True) in keywords else None


# DataLoader and its drop-in replacements, with its signature and defaults (`num_workers=0`).
LOADER_CLASSES = frozenset(["DataLoader", "StatefulDataLoader"])


def grad_mode_set_by(name: str, argument: bool | None, has_argument: bool) -> bool | None:
    """Whether gradients are on inside `with name(argument):` (or a function decorated with it),
    for the last part of the name (`torch.no_grad` -> `no_grad`): False for `no_grad`,
    `inference_mode()` and `set_grad_enabled(False)`; True for `enable_grad`, `set_grad_enabled(True)`
    and `inference_mode(False)` (leaving inference mode turns gradients on, even inside `no_grad`);
    None when the mode is left as it was or the argument is not a literal. The one table of every
    reader of grad mode: the flow's on LibCST, and the scan of other modules' calls on `ast`."""
    if name == "no_grad":
        return False
    if name == "enable_grad":
        return True
    if name == "inference_mode":
        return False if not has_argument else None if argument is None else not argument
    if name == "set_grad_enabled":
        return argument
    return None


def resets_by_name(name: str) -> bool:
    """A function named for a reset: `reset`, `reset_episode`, `_reset_state`."""
    return "reset" in name.lower().split("_")
