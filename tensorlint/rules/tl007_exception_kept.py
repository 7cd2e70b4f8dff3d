"""TL007: a caught exception kept in a container, with the traceback and the frames it holds."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import chain

import libcst as cst

from tensorlint.analysis import (
    BUILTIN_NAMES,
    STORE_METHODS,
    Accumulation,
    Facts,
    Imports,
    Place,
    Store,
    Unit,
    all_params,
    annotated_plain,
    argument,
    callee_name,
    calls_in,
    dotted_name,
    is_training_iteration,
    names_reaching,
    placed,
    root_name,
    same_code,
    walk,
)
from tensorlint.rule import Applicability, NodeFix, Report, Rule

# Methods that put their argument into the receiver, and the index of that argument. `put` (a
# queue handing the exception to another thread, which re-raises it) is left out on purpose.
# `update` takes a mapping: the exception would sit inside its argument, not be it.
_STORE_METHODS = {method: position for method, position in STORE_METHODS.items() if method != "update"}

# What returns the exception being handled: in a helper, its caller's (`self._keep()` in an `except` block).
_CURRENT_EXCEPTION = frozenset(["sys.exc_info", "exc_info", "sys.exception"])


class ExceptionKept(Rule):
    """
    ## What it does
    Checks for a caught exception (`except ... as e`) stored into a container: `errors.append(e)`,
    `failures[key] = e`, `self.errors.append((batch_idx, e))`, `errors.append(sys.exc_info())`,
    `tracebacks.append(e.__traceback__)`, `failed.append(Failure(step, e))` for a dataclass or
    NamedTuple of the file, or a dict or tuple bound to a name first (`info = {"step": i,
    "error": e}`, then `failures.append(info)`); also a name the handler saves the exception in (`last_error = e`),
    stored after the handler ends, and a call from the handler of the file's function or method
    that adds what it is passed, or the exception being handled (`sys.exc_info()`,
    `sys.exception()`), to its object's container (`self._note_failure()`), or of a method of an
    object of a class the code shows, imported from the project (`self.monitor.on_failure(step, e)`
    after `self.monitor = TrainingMonitor()`). Reported when the
    container outlives the handler: an attribute, a global, a parameter or a closure variable, or
    a local container (or a local object's, `monitor.failures`) filled in a loop over batches or
    returned to the caller. An attribute that keeps one exception at a time
    (`self.ctx.last_error = e`) is reported too, unless the module re-raises it (a function that
    reads the attribute raises); so is a record whose field gets the exception
    (`record.error = e`) and that a container then keeps, and a record of the file returned
    holding it (`return False, SplitReason(..., exception=e)`).

    ## Why is this bad?
    An exception holds its traceback, and the traceback holds every frame between the `try` and
    the `raise`, with all their local variables: the tensors of the computation that failed, and
    their autograd graphs. Kept in a list, each exception keeps its frames' tensors for as long as
    the list lives. Measured on an NVIDIA H200: a function that allocates a 1024x1024 float32
    tensor and raises, with the handler doing `errs.append(e)`, keeps 4 MiB per call. PyTorch's
    FAQ describes the same reference chain ("the python exception object holds a reference to the
    stack frame where the error was raised").

    Not reported: messages and formatted tracebacks (`str(e)`, `f"{e}"`, `traceback.format_exc()`;
    also a saved exception's name rebound to its text before it is kept, `result = err` in the
    handler, then `result = self.format_result(result)` of a helper annotated `-> str`), the
    exceptions of a module that imports nothing of torch's nor of the packages built on it and
    whose `try` blocks call only its own functions and methods (a hub's cache scanner: the
    frames hold paths, not tensors; a callback it is handed may be training code, and is reported),
    an exception kept in an attribute to re-raise it later (a future's outcome, a thread's error
    raised in `join()`), an `ImportError` kept to explain a missing extension (an import's frames
    hold no tensors), a bare exception returned to the caller, a thread's exception handed to the code that started it (a function
    given as `threading.Thread(target=...)` that stores it in its parent's cell or in a container
    it was passed, to be re-raised or asserted on after `join()`), `queue.put(e)`, and local
    containers that die with the call (filled outside loops, or in a loop over a few candidates
    before one error is raised).

    ## Example
    ```python
    failures = []

    def run_all(model, batches):
        for batch in batches:
            try:
                model(batch)
            except RuntimeError as e:
                failures.append(e)
    ```

    Use instead:
    ```python
    failures = []

    def run_all(model, batches):
        for batch in batches:
            try:
                model(batch)
            except RuntimeError as e:
                failures.append(repr(e))  # or e.with_traceback(None)
    ```

    ## Fix safety
    Where the exception itself is stored (alone or in a tuple), the fix stores
    `e.with_traceback(None)`: the same exception object, without the traceback that holds the
    frames. It is unsafe: code that later prints or re-raises the kept exception loses the
    traceback, and an exception chained to it (`__context__`, `__cause__`) still holds its own.

    ## References
    - [PyTorch FAQ: My out of memory exception handler can't allocate memory](https://docs.pytorch.org/docs/stable/notes/faq.html)
    - [Python reference: `except` clause (why `as e` is deleted at the end of the handler)](https://docs.python.org/3/reference/compound_stmts.html#except-clause)
    """

    code = "TL007"
    fix_availability = "Sometimes"
    name = "exception-kept"
    summary = "Caught exception kept in a container: its traceback keeps the frames' tensors"
    grows_over_a_run = True
    invalid = (
        """
        import torch

        errors = []

        def step(model, batch):
            try:
                return model(batch)
            except RuntimeError as e:
                errors.append(e)
        """,
        """
        import sys
        import torch

        class Evaluator:
            def __init__(self):
                self.failures = {}

            def run(self, model, batches):
                for i, batch in enumerate(batches):
                    try:
                        model(batch)
                    except Exception:
                        self.failures[i] = sys.exc_info()
        """,
    )
    valid = (
        """
        import torch

        errors = []

        def step(model, batch):
            try:
                return model(batch)
            except RuntimeError as e:
                errors.append(repr(e))
        """,
        """
        import threading
        import torch

        class Prefetcher(threading.Thread):
            def __init__(self, loader):
                super().__init__()
                self.loader = loader
                self.error = None

            def run(self):
                try:
                    for batch in self.loader:
                        batch.cuda(non_blocking=True)
                except Exception as e:
                    self.error = e

            def join(self, timeout=None):
                super().join(timeout)
                if self.error is not None:
                    raise self.error
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        # `self._keep(e)`, `record(errors, e)`: helpers that store what they are given, at their calls
        events: list[Store | Accumulation] = [*facts.stores, *facts.accumulations]
        helped = {
            id(event.node): (event.container if isinstance(event, Store) else event.target, event.value_expr)
            for event in events
            if event.via
        }
        records = {name for name, cls in facts.index.classes.items() if cls.is_record}
        plain = _plain_python(facts)
        for unit in facts.index.units:
            saved = _saved_exceptions(unit, facts.imports)
            if not (unit.has_try or saved):
                continue  # only code in an `except` block, or a name it saved the exception in, holds one
            yield from _returned_in_records(unit, saved, records)
            stores = chain(placed(unit, cst.Call), placed(unit, cst.Assign), placed(unit, cst.AugAssign))
            for node, place in stores:
                if not (place.handlers or saved) or _only_import_errors(place):
                    continue
                names = _exception_names(place) | saved if place.handlers else saved
                # appended, or added by a helper: it grows
                added = _stored(node) or helped.get(id(node)) or _stored_by_helper(facts, unit, node)
                stored = added or _slot(node) or _slot_by_helper(facts, unit, node)
                if stored is None:
                    continue
                container, value = stored
                kept = _kept_exception(value, names, records, unit.bindings)
                if kept is None or (not place.handlers and _converted_before(facts, unit, kept, node)):
                    continue
                if plain and place.handlers and _tries_call_only_own_code(facts, unit, place.handlers[-1:]):
                    continue  # the traceback's frames are this module's, which holds no tensor
                # (one from `sys.exc_info()` was raised in the caller's code: any frames, tensors included)
                lifetime = None
                if type(container) is cst.Attribute and type(node) is not cst.AugAssign and not added:
                    # `result.error = e` on a record that a container then keeps; `self.last_error = e`:
                    # one exception at a time, kept until the next replaces it, unless re-raised
                    keeper = _keeper(facts, unit, container)
                    if keeper is None and _reraised(facts, container):
                        continue
                    lifetime = None if keeper is not None else "until the next failure replaces it"
                    container = keeper or container
                if not _outlives(facts, unit, container, place, grows=bool(added)):
                    continue
                name = root_name(container)
                described = f"`{name}`" if name else "a container"
                advice = (
                    f"keep `repr({kept.value})` or `{kept.value}.with_traceback(None)` instead"
                    if type(kept) is cst.Name
                    else "keep the formatted text (`traceback.format_exc()`) instead"
                )
                yield Report(
                    node,
                    f"{_what(kept)} kept in {described}: the traceback keeps every frame between the "
                    "`try` and the `raise` alive, with their tensors and graphs, "
                    f"{lifetime or f'for as long as {described} lives'}; {advice}",
                    _fix(kept, _exception_names(place)),  # a saved name may hold None: no fix there
                )


def _returned_in_records(unit: Unit, saved: set[str], records: set[str]) -> Iterator[Report]:
    """`return False, SplitReason(kind, message, exception=e)`: a record of the file, made to be
    kept by the caller, holding the exception. (A bare `return e` hands it to a caller that may
    raise or log it and let it go: not reported.)"""
    for node, place in placed(unit, cst.Return):
        if node.value is None or not (place.handlers or saved) or _only_import_errors(place):
            continue
        names = _exception_names(place) | saved
        parts = [e.value for e in node.value.elements] if type(node.value) is cst.Tuple else [node.value]
        for part in parts:
            if type(part) is cst.Call and callee_name(part) in records:
                kept = _kept_exception(part, names, records)
                if kept is not None:
                    yield Report(
                        node,
                        f"{_what(kept)} returned inside a `{callee_name(part)}` record, which the caller keeps: "
                        "the traceback keeps every frame between the `try` and the `raise` alive, with their "
                        "tensors and graphs, for as long as the record lives; keep the formatted text "
                        "(`repr(e)`, `traceback.format_exc()`) in the record instead",
                        _fix(kept, _exception_names(place)),
                    )
                    break


def _slot_target(node: cst.Assign) -> cst.Attribute | None:
    target = node.targets[0].target if len(node.targets) == 1 else None
    return target if type(target) is cst.Attribute else None


def _slot(node: cst.CSTNode) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(attribute, value) for `obj.attr = value`: a slot that keeps what it is given."""
    if type(node) is not cst.Assign:
        return None
    target = _slot_target(node)
    return (target, node.value) if target is not None else None


def _helper_called(facts: Facts, unit: Unit, node: cst.CSTNode) -> tuple[Unit, dict[str, cst.BaseExpression]] | None:
    """The file's function or the object's method that `node` calls, with what it passes by
    parameter name; None for another call, or one with keywords or unpacking."""
    if type(node) is not cst.Call:
        return None
    func = node.func
    callee = None
    if type(func) is cst.Name:
        callee = unit.lookup_def(func.value)
    elif type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == unit.self_name:
        method = unit.cls.methods.get(func.attr.value) if unit.cls is not None else None
        callee = facts.index.method_units.get(id(method)) if method is not None else None
    if (
        callee is None
        or type(callee.node) is not cst.FunctionDef
        or (node.args and any(a.keyword or a.star for a in node.args))
    ):
        return None
    params = [p.name.value for p in callee.argument_params]
    return callee, dict(zip(params, (a.value for a in node.args), strict=False))


def _on_own_object(callee: Unit, owner: cst.BaseExpression) -> bool:
    """`self.ctx`, `self.stats.failures` in a method: state of the object the caller calls it on."""
    return callee.is_method and (root_name(owner) or "").split(".")[0] == callee.self_name


def _slot_by_helper(
    facts: Facts, unit: Unit, node: cst.CSTNode
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(attribute, value) for `_remember(self.ctx, e)` where the file's helper does `owner.error = value`:
    the call's argument for `owner`, with the attribute, and its argument for `value`."""
    called = _helper_called(facts, unit, node)
    if called is None:
        return None
    callee, passed = called
    for assign, _ in placed(callee, cst.Assign):
        target = _slot_target(assign)
        if target is None or type(assign.value) is not cst.Name or assign.value.value not in passed:
            continue
        owner = target.value
        if type(owner) is cst.Name and owner.value in passed:  # `owner.error = value`
            return target.with_changes(value=passed[owner.value]), passed[assign.value.value]
        if _on_own_object(callee, owner):
            return target, passed[assign.value.value]  # `self.ctx.error = value`: the same object's
    return None


def _stored_by_helper(
    facts: Facts, unit: Unit, node: cst.CSTNode
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(container, value) for `self._keep(e)` where the method does `self.stats.failures[key] = exc`,
    or for `self._note()` where it does `self.failures.append(sys.exc_info())` (the exception its
    caller's handler is handling): an entry added to its object's container, or to a container the
    caller passes."""
    called = _helper_called(facts, unit, node)
    if called is None:
        return None
    callee, passed = called
    for statement, _ in chain(placed(callee, cst.Assign), placed(callee, cst.Call)):
        stored = _stored(statement)
        if stored is None:
            continue
        container, value = stored
        if type(value) is cst.Name and value.value in passed:
            value = passed[value.value]
        elif not _is_current_exception(value):
            continue
        if type(container) is cst.Name and container.value in passed:
            return passed[container.value], value  # `failures[key] = exc`
        if _on_own_object(callee, container):
            return container, value
    return None


def _keeper(facts: Facts, unit: Unit, slot: cst.BaseExpression) -> cst.BaseExpression | None:
    """The container that keeps a local object whose attribute was set: `records` for
    `record.error = e` followed by `self.records.append(record)`."""
    owner = slot.value if type(slot) is cst.Attribute else None
    if type(owner) is not cst.Name or facts.container_kind(unit, owner)[0] != "local":
        return None
    for node, _ in chain(placed(unit, cst.Call), placed(unit, cst.Assign), placed(unit, cst.AugAssign)):
        stored = _stored(node)
        if stored is not None and _kept_exception(stored[1], {owner.value}, set()) is not None:
            return stored[0]
    return None


def _reraised(facts: Facts, container: cst.BaseExpression) -> bool:
    """Whether the module reads the attribute in a function that raises: the slot hands an error
    on (a future's outcome, a worker's failure re-raised by its owner), one at a time."""
    if type(container) is not cst.Attribute:
        return False
    attribute = container.attr.value

    def reads(expr: cst.CSTNode | None, names: set[str]) -> bool:
        return expr is not None and any(
            (type(n) is cst.Attribute and n.attr.value == attribute) or (type(n) is cst.Name and n.value in names)
            for n in (expr, *walk(expr))
        )

    for unit in facts.index.units:
        raises = placed(unit, cst.Raise)
        if not raises:
            continue
        copies = {  # `error = self._error` before `raise error`
            t.target.value
            for assign, _ in placed(unit, cst.Assign)
            if reads(assign.value, set())
            for t in assign.targets
            if type(t.target) is cst.Name
        }
        if any(reads(r.exc, copies) or reads(r.cause, copies) for r, _ in raises):
            return True
    return False


def _only_import_errors(place: Place) -> bool:
    """A handler of `ImportError` alone: the frames it keeps are an import's, with no tensors."""
    handler = place.handlers[-1] if place.handlers else None
    caught = handler.type if handler is not None else None
    return caught is not None and dotted_name(caught) in ("ImportError", "ModuleNotFoundError")


def _exception_names(place: Place) -> set[str]:
    names = set()
    for handler in place.handlers:
        if handler.name is not None and type(handler.name.name) is cst.Name:
            names.add(handler.name.name.value)
    return names


def _saved_exceptions(unit: Unit, imports: Imports) -> set[str]:
    """Names a handler saves its exception in (`last_error = exc`): they keep it, and its
    traceback, after the handler ends (Python deletes only `exc` itself); and the exception and
    traceback that `sys.exc_info()` hands a helper called from a handler (`_, e, tb =
    sys.exc_info()`, `e = sys.exception()`)."""
    saved: set[str] = set()
    for node, place in placed(unit, cst.Assign):
        if place.handlers and type(node.value) is cst.Name and node.value.value in _exception_names(place):
            saved.update(t.target.value for t in node.targets if type(t.target) is cst.Name)
        made = imports.qualify(node.value.func) if type(node.value) is cst.Call else None
        for target in (t.target for t in node.targets):
            if made == "sys.exception" and type(target) is cst.Name:
                saved.add(target.value)
            elif made == "sys.exc_info" and type(target) is cst.Tuple and len(target.elements) == 3:
                saved.update(e.value.value for e in target.elements[1:] if type(e.value) is cst.Name)
    return saved


def _stored(node: cst.CSTNode) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(container, value) for `c.append(v)`, `c[k] = v`, `c += [v]`."""
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        position = _STORE_METHODS.get(callee_name(node) or "")
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if position is not None and len(positional) > position:
            return node.func.value, positional[position]
    if type(node) is cst.Assign:
        for target in node.targets:
            if type(target.target) is cst.Subscript:
                return target.target.value, node.value
    if (
        type(node) is cst.AugAssign
        and type(node.operator) is cst.AddAssign
        and isinstance(node.value, (cst.List, cst.Tuple))
    ):
        return node.target, node.value
    return None


def _kept_exception(
    value: cst.BaseExpression,
    names: set[str],
    records: set[str],
    bound: Mapping[str, list[cst.BaseExpression]] | None = None,
) -> cst.BaseExpression | None:
    """The part of a stored value that holds a traceback: `e`, `(i, e)`, `e.__traceback__`,
    `sys.exc_info()`, `Failure(step, e)` for a dataclass or NamedTuple of the file; or a local
    name `bound` to one of those (`info = {"error": e}`, then `failures.append(info)`)."""
    if type(value) is cst.Name and value.value in names:
        return value
    if type(value) is cst.Name and bound:
        rest = {name: values for name, values in bound.items() if name != value.value}
        shown = (_kept_exception(v, names, records, rest) for v in bound.get(value.value, []))
        return next((found for found in shown if found is not None), None)
    if type(value) is cst.Attribute and value.attr.value == "__traceback__":
        return value
    if _is_current_exception(value):
        return value
    if isinstance(value, (cst.Tuple, cst.List)):
        parts = [element.value for element in value.elements]
    elif type(value) is cst.Dict:
        parts = [item.value for item in value.elements if type(item) is cst.DictElement]
    elif type(value) is cst.Call and callee_name(value) in records:
        parts = [arg.value for arg in value.args]
    else:
        return None
    return next((found for part in parts if (found := _kept_exception(part, names, records, bound)) is not None), None)


def _plain_python(facts: Facts) -> bool:
    """A module that imports nothing of torch's nor of the packages built on it (a hub's cache
    scanner, an XML parser vendored beside the models)."""
    imports = facts.imports
    origins = [*imports.aliases.values(), *imports.relative.values(), *imports.starred]
    return not any(origin.lstrip(".").partition(".")[0] in _TORCH_PACKAGES for origin in origins)


def _tries_call_only_own_code(facts: Facts, unit: Unit, handlers: tuple[cst.CSTNode, ...]) -> bool:
    """Whether every call in the `try` blocks whose exceptions are kept (the one of the handler
    keeping it; every one of the function for an exception saved in a name) runs the module's own
    code (a function it defines, a method one of its classes defines) or a builtin's: no callback
    handed in, nothing imported, whose frames could hold tensors."""
    index = facts.index
    own = {u.name for u in index.units} | {m for cls in index.classes.values() for m in cls.methods}
    for block, _ in placed(unit, cst.Try):
        if handlers and not any(handler is handlers[0] for handler in block.handlers):
            continue
        for call in (n for n in walk(block.body) if type(n) is cst.Call):
            name = callee_name(call)
            if type(call.func) is cst.Name:
                known = name in own or (name in BUILTIN_NAMES and facts.imports.origin(name) is None)
            else:
                known = name in own or name in STORE_METHODS
            if not known:
                return False
    return True


# Packages whose code holds tensors: a module importing one is torch code.
_TORCH_PACKAGES = frozenset(
    ["torch", "torchvision", "torchaudio", "torchtext", "lightning", "pytorch_lightning", "lightning_fabric",
     "transformers", "accelerate", "deepspeed", "diffusers", "peft", "trl", "timm", "fairseq", "fairseq2",
     "detectron2", "mmcv", "mmengine", "dgl", "torch_geometric", "megatron", "apex", "xformers", "vllm"]
)  # fmt: skip


def _converted_before(facts: Facts, unit: Unit, kept: cst.BaseExpression, node: cst.CSTNode) -> bool:
    """`result = self.format_result(result)` just before `results.append(result)`: the name the
    handler saved the exception in, rebound in the store's own block before it to what no longer
    holds the exception (a constant, a string made of it, or what a helper of the file annotated
    to return text or numbers gives)."""
    if type(kept) is not cst.Name:
        return False
    for block in (n for n in walk(unit.node) if type(n) is cst.IndentedBlock):
        statements = list(block.body)
        at = next((i for i, s in enumerate(statements) if any(node is n for n in walk(s))), None)
        if at is None or type(statements[at]) is not cst.SimpleStatementLine:
            continue
        for statement in reversed(statements[:at]):
            assigned = [s for s in walk(statement) if type(s) is cst.Assign]
            rebinding = [a for a in assigned if any(same_code(t.target, kept) for t in a.targets)]
            if not rebinding:
                continue
            value = rebinding[-1].value
            if type(statement) is not cst.SimpleStatementLine:
                return False  # rebound on some path only
            if type(value) in (cst.SimpleString, cst.Integer, cst.Float) or (
                type(value) is cst.Name and value.value in ("None", "True", "False")
            ):
                return True  # `result = None`
            if type(value) is cst.FormattedString or (type(value) is cst.Call and callee_name(value) in _TEXT_OF):
                return True
            called = _helper_called(facts, unit, value)
            return called is not None and annotated_plain(called[0])
        return False
    return False


# Builtins that make text of an object: the text keeps no traceback.
_TEXT_OF = frozenset(["str", "repr", "format", "pformat", "format_exception", "format_exc"])


def _is_current_exception(value: cst.BaseExpression) -> bool:
    """`sys.exc_info()`, `sys.exception()`: the exception being handled, wherever the call is."""
    return type(value) is cst.Call and dotted_name(value.func) in _CURRENT_EXCEPTION


def _outlives(facts: Facts, unit: Unit, container: cst.BaseExpression, place: Place, *, grows: bool) -> bool:
    lifetime, _ = facts.container_kind(unit, container)
    handed_in = type(container) is cst.Name and any(p.name.value == container.value for p in _params(unit))
    if (lifetime == "closure" or handed_in) and _runs_in_a_thread(facts, unit):
        return False  # the hand-off of a thread's error: re-raised or asserted on after join()
    if lifetime in ("attribute", "global", "closure"):
        return True
    if handed_in:
        return True  # the caller's container
    # `monitor.failures` that a helper appends to grows as `monitor` lives; `enhanced.__cause__ = e` is one slot
    local = container.value if type(container) is cst.Attribute and grows else container
    if not (place.loops and type(local) is cst.Name):
        return False
    if _raised_after(unit, facts.imports):
        return False  # `failure = e` in the handler, `raise failure` later: the call ends in a raise
    # A local container grows with its loop: past the call only if the function returns it,
    # and without bound within the call only in a loop over batches.
    if local.value in names_reaching(unit, facts.returned.get(id(unit), set())):
        return True
    return any(is_training_iteration(loop, unit, facts.imports) for loop in place.loops)


def _runs_in_a_thread(facts: Facts, unit: Unit) -> bool:
    """A function the file starts as a thread, `threading.Thread(target=_worker, ...)`: what it
    puts in a container of its parent or its caller is a hand-off, re-raised after `join()`."""
    if not unit.name or unit.is_method:
        return False
    for other in facts.index.units:
        for call in calls_in(other.node) if other.node is not None else []:
            target = argument(call, "target")
            if (callee_name(call) or "").endswith("Thread") and type(target) is cst.Name and target.value == unit.name:
                return True
    return False


def _raised_after(unit: Unit, imports: Imports) -> bool:
    """Whether a handler saves the exception in a name that the function raises: then it
    returns its container only when nothing was caught."""
    saved = _saved_exceptions(unit, imports)
    return any(type(r.exc) is cst.Name and r.exc.value in saved for r, _ in placed(unit, cst.Raise))


def _params(unit: Unit) -> list[cst.Param]:
    node = unit.node
    return all_params(node.params) if isinstance(node, (cst.FunctionDef, cst.Lambda)) else []


def _what(kept: cst.BaseExpression) -> str:
    if type(kept) is cst.Name:
        return f"exception `{kept.value}`"
    if type(kept) is cst.Call:
        return "`sys.exc_info()` (with its traceback)"
    return "a traceback"


def _fix(kept: cst.BaseExpression, names: set[str]) -> NodeFix | None:
    if not (type(kept) is cst.Name and kept.value in names):
        return None
    without = cst.Call(
        func=cst.Attribute(value=kept, attr=cst.Name("with_traceback")), args=[cst.Arg(cst.Name("None"))]
    )
    return NodeFix("Keep the exception without its traceback", Applicability.UNSAFE, ((kept, without),))
