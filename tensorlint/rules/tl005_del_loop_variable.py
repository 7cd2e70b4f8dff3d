"""TL005: `del` of a loop variable, over a container that still holds every item."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from tensorlint.analysis import Facts, Unit, callee_name, declared_container, dotted_name, names_in, own_nodes, placed
from tensorlint.rule import Applicability, NodeFix, Report, Rule


class DelLoopVariable(Rule):
    """
    ## What it does
    Checks for `del x` inside `for x in container:` where the container outlives the loop: an
    attribute (`self._tensors`), or a list, dict, set or tuple the file builds, iterated
    directly or through `.values()`, `.items()`, `enumerate()`, `reversed()` or `zip()`; also
    over a tuple or list written out of names and attributes (`for t in (logits, hidden): del t`),
    which still hold every item.

    ## Why is this bad?
    `del` removes a name, not an object. The loop variable is one more reference to an item
    that the container still holds, so deleting it frees nothing: the tensors stay allocated
    until they leave the container. Measured on an NVIDIA H200: a tensor pool whose
    `release()` did `for t in self._tensors: del t` kept every registered tensor, 1 MiB per
    iteration for 256x1024 float32 tensors. PyTorch's FAQ: "Don't hold onto tensors and
    variables you don't need" - and the reference to drop here is the container's.

    Not reported: loops over a DataLoader, a generator or any call whose result the file
    does not show to be a container (the loop variable may then be the last reference, and
    `del` frees it, as in `for batch in loader: ...; del batch`); a loop variable rebound in
    the body before the `del` (`t = t.cuda()` makes a new tensor that `del` does free); an item
    the body replaces in the container (`optimizers[i] = wrapped`: `del` drops its last reference); keys
    of a dict; a loop that only deletes, over a local container (or a tuple of local names), at
    the end of its function (the items go with the container when the call returns, right after
    the loop); a tuple with an item that no name holds (`(x.cpu(), y)`).

    ## Example
    ```python
    class TensorPool:
        def __init__(self):
            self._tensors = []

        def release(self):
            for t in self._tensors:
                del t  # frees nothing: self._tensors still holds t
    ```

    Use instead:
    ```python
    class TensorPool:
        def __init__(self):
            self._tensors = []

        def release(self):
            self._tensors.clear()
    ```

    ## Fix safety
    When the loop body does nothing but delete its variables and the container is a list, dict
    or set, the fix replaces the loop with `container.clear()`. It is unsafe: it empties the
    container, which is what freeing the tensors takes, but code that reads the container
    afterwards sees it empty.

    ## References
    - [PyTorch FAQ: Don't hold onto tensors and variables you don't need](https://docs.pytorch.org/docs/stable/notes/faq.html)
    - [Python reference: the `del` statement](https://docs.python.org/3/reference/simple_stmts.html#the-del-statement)
    """

    code = "TL005"
    reads_flow = False
    fix_availability = "Sometimes"
    name = "del-loop-variable"
    summary = "`del` of a loop variable frees nothing: the container still holds the item"
    invalid = (
        """
        import torch

        class TensorManager:
            def __init__(self):
                self._tensors = []

            def register(self, tensor: torch.Tensor):
                self._tensors.append(tensor)

            def release_all(self):
                for t in self._tensors:
                    del t
        """,
        """
        import torch

        def free_cache(cache: dict[str, torch.Tensor]):
            for name, tensor in cache.items():
                print(name, tensor.shape)
                del tensor
        """,
    )
    valid = (
        """
        import torch

        def train(model, loader, optimizer):
            for batch in loader:
                loss = model(batch).sum()
                loss.backward()
                optimizer.step()
                del batch, loss
        """,
        """
        import torch

        class TensorManager:
            def __init__(self):
                self._tensors = []

            def release_all(self):
                self._tensors.clear()
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        for unit in facts.index.units:
            if not unit.has_loop:
                continue
            for node, _ in placed(unit, cst.For):
                yield from self._loop(facts, unit, node)

    def _loop(self, facts: Facts, unit: Unit, loop: cst.For) -> Iterator[Report]:
        held = _held_targets(facts, unit, loop.iter, loop.target)
        if not held:
            return
        container, names = held
        if _dies_after(unit, loop, container) or _replaces_items(loop, container):
            return
        rebound = _assigned_in(loop.body)
        for node in own_nodes(loop.body):
            if type(node) is not cst.Del:
                continue
            deleted = [n for n in _del_names(node) if n in names and n not in rebound]
            if not deleted:
                continue
            shown = ", ".join(f"`{n}`" for n in deleted)
            stays = "stays" if len(deleted) == 1 else "stay"
            if isinstance(container, (cst.Tuple, cst.List)):
                holders = ", ".join(dotted_name(item.value) or "" for item in container.elements)
                yield Report(
                    node,
                    f"`del {deleted[0]}` unbinds only the loop variable: `{holders}` still hold every item, so "
                    f"{shown} {stays} allocated; delete or rebind those instead (`del {holders}`)",
                )
                continue
            described = dotted_name(container) or "the container"
            yield Report(
                node,
                f"`del {deleted[0]}` unbinds only the loop variable: `{described}` still holds every item, so "
                f"{shown} {stays} allocated; empty the container (`{described}.clear()`) or drop "
                "the items from it",
                _fix(facts, unit, loop, container, names),
            )


def _held_targets(
    facts: Facts, unit: Unit, iterable: cst.BaseExpression, target: cst.BaseExpression
) -> tuple[cst.BaseExpression, set[str]] | None:
    """The container behind the iterable and the loop-variable names bound to its items."""
    if type(iterable) is cst.Call:
        name = callee_name(iterable)
        args = [a.value for a in iterable.args if a.keyword is None and not a.star]
        if name in ("values", "items") and not args and type(iterable.func) is cst.Attribute:
            container = iterable.func.value
            if declared_container(facts.index, unit, container) != "dict":
                return None
            if name == "values":
                return container, _names(target)
            return (container, _names(target.elements[1].value)) if _pair(target) else None  # type: ignore[attr-defined]
        if name == "enumerate" and type(iterable.func) is cst.Name and args and _pair(target):
            return _held_targets(facts, unit, args[0], target.elements[1].value)  # type: ignore[attr-defined]
        if name == "reversed" and type(iterable.func) is cst.Name and args:
            return _held_targets(facts, unit, args[0], target)
        if name == "zip" and type(iterable.func) is cst.Name and args:
            if type(target) is not cst.Tuple or len(target.elements) != len(args):
                return None
            found: set[str] = set()
            first: cst.BaseExpression | None = None
            for arg, element in zip(args, target.elements, strict=True):
                inner_held = _held_targets(facts, unit, arg, element.value)
                if inner_held is not None:
                    first = first or inner_held[0]
                    found |= inner_held[1]
            return (first, found) if first is not None and found else None
        return None
    if isinstance(iterable, (cst.Tuple, cst.List)):
        return (iterable, _names(target)) if _held_by_names(iterable) else None
    kind = declared_container(facts.index, unit, iterable)
    if kind is None or kind == "dict":
        return None  # iterating a dict gives its keys
    return iterable, _names(target)


def _held_by_names(literal: cst.Tuple | cst.List) -> bool:
    """`for t in (logits, hidden, self.cache)`: every item is also held by a name or an attribute,
    which `del t` leaves bound (not `(x.cpu(), y)`: the tuple may hold the only reference)."""
    return bool(literal.elements) and all(
        type(item) is not cst.StarredElement and dotted_name(item.value) is not None for item in literal.elements
    )


def _replaces_items(loop: cst.For, container: cst.BaseExpression) -> bool:
    """`optimizers[i] = wrapped` in `for i, optimizer in enumerate(optimizers)`: the slot of the
    item, indexed by the loop's own index or key, no longer holds it, and `del` drops what may be
    its last reference."""
    held = dotted_name(container)
    loop_names = names_in(loop.target)
    return held is not None and any(
        type(node) is cst.Assign
        and any(
            type(t.target) is cst.Subscript
            and dotted_name(t.target.value) == held
            and len(t.target.slice) == 1
            and type(t.target.slice[0].slice) is cst.Index
            and type(t.target.slice[0].slice.value) is cst.Name
            and t.target.slice[0].slice.value.value in loop_names
            for t in node.targets
        )
        for node in own_nodes(loop.body)
    )


def _dies_after(unit: Unit, loop: cst.For, container: cst.BaseExpression) -> bool:
    """A loop that only deletes, over a local container, as the last thing its function does (a
    `return` that does not hand the container back may follow): the items go with the container
    when the call ends, right after the loop. (A loop that works on each item and deletes it as it
    goes means to lower the peak during the loop: that `del` is reported.)"""
    if not (_only_deletes(loop) and type(unit.node) is cst.FunctionDef):
        return False
    # `for t in (logits, hidden): del t`: the local names that hold the items go as well
    holders = (
        [item.value for item in container.elements] if isinstance(container, (cst.Tuple, cst.List)) else [container]
    )
    return all(
        type(holder) is cst.Name
        and holder.value in unit.bindings
        and holder.value not in unit.declared_global
        and holder.value not in unit.declared_nonlocal
        and _last_in(unit.node.body, loop, holder.value)
        for holder in holders
    )


def _last_in(block: cst.BaseSuite | cst.Else, loop: cst.For, name: str) -> bool:
    """Whether `loop` is the last statement `block` runs, through `if`, `with` and `try` blocks,
    followed at most by `return`s that do not read `name`."""
    statements = list(block.body) if isinstance(block.body, Sequence) else []
    for position, statement in enumerate(statements):
        if statement is not loop and not any(node is loop for node in own_nodes(statement)):
            continue
        for after in statements[position + 1 :]:
            small = after.body[0] if type(after) is cst.SimpleStatementLine and len(after.body) == 1 else None
            if type(small) is not cst.Return or (small.value is not None and name in names_in(small.value)):
                return False
        if statement is loop:
            return True
        if type(statement) is cst.With or (
            type(statement) is cst.Try and statement.orelse is None and statement.finalbody is None
        ):
            return _last_in(statement.body, loop, name)
        branch: cst.CSTNode | None = statement
        while type(branch) is cst.If:
            if _last_in(branch.body, loop, name):
                return True
            if type(branch.orelse) is cst.Else:
                return _last_in(branch.orelse.body, loop, name)
            branch = branch.orelse
        return False
    return False


def _pair(target: cst.BaseExpression) -> bool:
    return type(target) is cst.Tuple and len(target.elements) == 2


def _names(target: cst.BaseExpression) -> set[str]:
    if type(target) is cst.Name:
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_names(e.value) for e in target.elements))
    return set()


def _del_names(node: cst.Del) -> list[str]:
    target = node.target
    elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    return [e.value for e in elements if type(e) is cst.Name]


def _assigned_in(body: cst.BaseSuite) -> set[str]:
    """Names the loop body rebinds: after `t = t.cuda()`, `del t` frees the new tensor."""
    names: set[str] = set()
    for node in own_nodes(body):
        targets: list[cst.BaseExpression] = []
        if type(node) is cst.Assign:
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)):
            targets = [node.target]
        elif type(node) is cst.WithItem and node.asname is not None:
            targets = [node.asname.name]
        for target in targets:
            names |= _names(target)
    return names


def _only_deletes(loop: cst.For, names: set[str] | None = None) -> bool:
    """Whether the loop's body is nothing but `del` statements (of `names` only, when given)."""
    if loop.orelse is not None or type(loop.body) is not cst.IndentedBlock:
        return False
    return all(
        type(statement) is cst.SimpleStatementLine
        and all(
            type(small) is cst.Del and (names is None or set(_del_names(small)) <= names) for small in statement.body
        )
        for statement in loop.body.body
    )


def _fix(facts: Facts, unit: Unit, loop: cst.For, container: cst.BaseExpression, names: set[str]) -> NodeFix | None:
    """`for t in xs: del t` -> `xs.clear()`, when deleting is all the loop does."""
    if not _only_deletes(loop, names):
        return None
    if declared_container(facts.index, unit, container) not in ("list", "dict", "set"):
        return None
    if type(container) is cst.Name and not unit.lookup_bindings(container.value):
        return None  # a parameter: emptying the caller's container is not this function's call
    clear = cst.SimpleStatementLine(
        [cst.Expr(cst.Call(func=cst.Attribute(value=container, attr=cst.Name("clear"))))],
        leading_lines=loop.leading_lines,
    )
    return NodeFix(
        f"Empty the container: `{dotted_name(container) or 'container'}.clear()`",
        Applicability.UNSAFE,
        ((loop, clear),),
    )
